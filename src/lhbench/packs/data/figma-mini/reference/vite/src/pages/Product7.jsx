export default function Product7() {
  return (
<main className="page">

<header className="site-header">
  <a className="logo" href="/"><svg className="icon" width="28" height="28" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M12 3c5 0 8 4 8 9s-3 9-8 9-8-4-8-9 3-9 8-9zm0 0c-3 4 3 14 0 18"></path></svg><span className="logo-text">Fernhill</span></a>
  <nav className="nav">
    <a className="nav-link" href="/menu">Menu</a>
    <a className="nav-link" href="/about">About</a>
    <a className="nav-link" href="/contact">Contact</a>
    <svg className="icon nav-icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M3 4h2l2 11h11l2-8H6M9 20a1 1 0 1 0 0-.1M17 20a1 1 0 1 0 0-.1"></path></svg>
  </nav>
  <svg className="icon menu-toggle" width="28" height="28" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M4 7h16M4 12h16M4 17h16"></path></svg>
</header>
<div className="breadcrumb">Menu / Filter / Cedar Bench</div>
<section className="product">
  <img className="product-image" src="/assets/product-7.png" alt="Cedar Bench" />
  <div className="product-info">
    <span className="eyebrow">Filter</span>
    <h1 className="h1">Cedar Bench</h1>
    <span className="product-price">$18</span>
    <p className="lead">Cedar, plum and brown sugar, roasted light.</p>
    <div className="sizes">
      <span className="size is-selected">250 g</span>
      <span className="size">500 g</span>
      <span className="size">1 kg</span>
    </div>
    <a className="btn btn-primary" href="/menu"><span>Add to cart</span></a>
    <div className="facts">
      <span className="body">Roasted on Mondays and Thursdays</span>
      <span className="body">Free delivery over $40</span>
    </div>
  </div>
</section>
<section className="section">
  <div className="section-head">
    <h2 className="h2">You might also like</h2>
  </div>
  <div className="grid-3">
<a className="card" href="/product/5">
  <img className="card-image" src="/assets/product-5.png" alt="Morning Fog" />
  <div className="card-body">
    <span className="h3">Morning Fog</span>
    <span className="price">$16</span>
  </div>
</a>
<a className="card" href="/product/6">
  <img className="card-image" src="/assets/product-6.png" alt="Ridge Walk" />
  <div className="card-body">
    <span className="h3">Ridge Walk</span>
    <span className="price">$17</span>
  </div>
</a>
<a className="card" href="/product/8">
  <img className="card-image" src="/assets/product-8.png" alt="River Stone" />
  <div className="card-body">
    <span className="h3">River Stone</span>
    <span className="price">$15</span>
  </div>
</a>
  </div>
</section>

<footer className="site-footer">
  <div className="footer-col">
    <span className="footer-title">Fernhill Coffee Roasters</span>
    <span className="footer-text">14 Orchard Lane, Fernhill Valley</span>
  </div>
  <div className="footer-col">
    <span className="footer-title">Opening hours</span>
    <span className="footer-text">Mon to Sat, 7am to 5pm</span>
  </div>
  <div className="footer-col">
    <span className="footer-title">Stay in touch</span>
    <span className="footer-text">© 2026 Fernhill Coffee. Roasted with care.</span>
  </div>
</footer>
</main>
  );
}
