export default function Home() {
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
<section className="hero">
  <div className="hero-copy">
    <span className="eyebrow">Small-batch roasters</span>
    <h1 className="h1">Coffee roasted on the hill, poured in the valley</h1>
    <p className="lead">Seasonal single origins and a house blend, roasted twice a week in our barn and delivered fresh to your door.</p>
    <div className="hero-actions">
      <a className="btn btn-primary" href="/menu"><span>Shop the menu</span></a>
      <a className="btn btn-secondary" href="/about"><span>Our story</span></a>
    </div>
  </div>
  <img className="hero-image" src="/assets/hero.png" alt="Roastery on the hill" />
</section>
<section className="features">
  <div className="feature">
    <div className="feature-icon"><svg className="icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M5 19c8 0 14-6 14-14-8 0-14 6-14 14zm0 0 8-8"></path></svg></div>
    <span className="h3">Traceable beans</span>
    <p className="body">Every lot is bought from farms we visit, and the price we paid is on the bag.</p>
  </div>
  <div className="feature">
    <div className="feature-icon"><svg className="icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M3 6h11v10H3zm11 4h4l3 3v3h-7zM7 19a2 2 0 1 0 0-.1M17 19a2 2 0 1 0 0-.1"></path></svg></div>
    <span className="h3">Roasted to order</span>
    <p className="body">We roast on Mondays and Thursdays and ship the same afternoon.</p>
  </div>
  <div className="feature">
    <div className="feature-icon"><svg className="icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M4 8h13v5a5 5 0 0 1-5 5H9a5 5 0 0 1-5-5zm13 2h2a2 2 0 0 1 0 4h-2M8 3v3m4-3v3"></path></svg></div>
    <span className="h3">Brewed with care</span>
    <p className="body">Tell us how you brew and we will grind and recommend to match.</p>
  </div>
</section>
<section className="section">
  <div className="section-head">
    <h2 className="h2">This week's picks</h2>
    <a className="link-more" href="/menu">See the full menu</a>
  </div>
  <div className="grid-3">
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
  </div>
</section>
<section className="band">
  <div className="band-copy">
    <h2 className="h2">Fresh roast, every other Monday</h2>
    <p className="lead">One short letter about what is in the roaster and what is worth brewing.</p>
  </div>
  <div className="band-form">
    <div className="input"><span className="placeholder">Your email address</span></div>
    <a className="btn btn-primary" href="/contact"><span>Subscribe</span></a>
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
