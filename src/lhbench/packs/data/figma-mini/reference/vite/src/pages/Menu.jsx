export default function Menu() {
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
<section className="page-title">
  <span className="eyebrow">Roasted this week</span>
  <h1 className="h1">Our menu</h1>
  <p className="lead">Whole beans in 250 g bags, ground to order on request.</p>
</section>

<section className="menu-section">
  <h2 className="h2">Espresso</h2>
  <div className="grid-4">
<a className="card" href="/product/1">
  <img className="card-image" src="/assets/product-1.png" alt="Hillside Espresso" />
  <div className="card-body">
    <span className="h3">Hillside Espresso</span>
    <span className="price">$14</span>
  </div>
</a>
<a className="card" href="/product/2">
  <img className="card-image" src="/assets/product-2.png" alt="Valley Blend" />
  <div className="card-body">
    <span className="h3">Valley Blend</span>
    <span className="price">$12</span>
  </div>
</a>
<a className="card" href="/product/3">
  <img className="card-image" src="/assets/product-3.png" alt="Night Shift Decaf" />
  <div className="card-body">
    <span className="h3">Night Shift Decaf</span>
    <span className="price">$13</span>
  </div>
</a>
<a className="card" href="/product/4">
  <img className="card-image" src="/assets/product-4.png" alt="Copper Kettle" />
  <div className="card-body">
    <span className="h3">Copper Kettle</span>
    <span className="price">$15</span>
  </div>
</a>
  </div>
</section>
<section className="menu-section">
  <h2 className="h2">Filter</h2>
  <div className="grid-4">
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
<a className="card" href="/product/7">
  <img className="card-image" src="/assets/product-7.png" alt="Cedar Bench" />
  <div className="card-body">
    <span className="h3">Cedar Bench</span>
    <span className="price">$18</span>
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
<section className="menu-section">
  <h2 className="h2">From the bakery</h2>
  <div className="grid-4">
<div className="card">
  <img className="card-image" src="/assets/pastry-1.png" alt="Cardamom bun" />
  <div className="card-body">
    <span className="h3">Cardamom bun</span>
    <span className="price">$4</span>
  </div>
</div>
<div className="card">
  <img className="card-image" src="/assets/pastry-2.png" alt="Rye cookie" />
  <div className="card-body">
    <span className="h3">Rye cookie</span>
    <span className="price">$3</span>
  </div>
</div>
<div className="card">
  <img className="card-image" src="/assets/pastry-3.png" alt="Pear galette" />
  <div className="card-body">
    <span className="h3">Pear galette</span>
    <span className="price">$5</span>
  </div>
</div>
<div className="card">
  <img className="card-image" src="/assets/pastry-4.png" alt="Oat flapjack" />
  <div className="card-body">
    <span className="h3">Oat flapjack</span>
    <span className="price">$3</span>
  </div>
</div>
  </div>
</section>
<section className="guide">
  <h2 className="h2">Brewing guide</h2>
  <div className="guide-row">
    <span className="guide-name">Espresso</span>
    <span className="guide-ratio">18 g in, 36 g out, 28 seconds</span>
  </div>
  <div className="guide-row">
    <span className="guide-name">Pour-over</span>
    <span className="guide-ratio">15 g to 250 g water at 94 °C</span>
  </div>
  <div className="guide-row">
    <span className="guide-name">French press</span>
    <span className="guide-ratio">30 g to 500 g water, four minutes</span>
  </div>
  <div className="guide-row">
    <span className="guide-name">Cold brew</span>
    <span className="guide-ratio">100 g to 1 litre, sixteen hours in the fridge</span>
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
