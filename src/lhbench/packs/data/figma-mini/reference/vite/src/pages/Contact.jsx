export default function Contact() {
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
  <span className="eyebrow">Contact</span>
  <h1 className="h1">Say hello</h1>
  <p className="lead">Wholesale, subscriptions or a question about your grinder: we answer within a day.</p>
</section>
<section className="contact">
  <div className="form">
    <div className="field">
      <span className="label">Name</span>
      <div className="input"><span className="placeholder">Your full name</span></div>
    </div>
    <div className="field">
      <span className="label">Email</span>
      <div className="input"><span className="placeholder">you@example.com</span></div>
    </div>
    <div className="field">
      <span className="label">Message</span>
      <div className="input textarea"><span className="placeholder">What can we help with?</span></div>
    </div>
    <a className="btn btn-primary" href="/contact"><span>Send message</span></a>
  </div>
  <div className="visit">
    <h2 className="h3">Visit the barn</h2>
    <div className="visit-row"><svg className="icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M12 21s7-6 7-12a7 7 0 0 0-14 0c0 6 7 12 7 12zm0-9a3 3 0 1 0 0-.1"></path></svg><span className="body">14 Orchard Lane, Fernhill Valley</span></div>
    <div className="visit-row"><svg className="icon" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round"><path d="M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zm0 4v5l3 2"></path></svg><span className="body">Mon to Sat, 7am to 5pm</span></div>
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
