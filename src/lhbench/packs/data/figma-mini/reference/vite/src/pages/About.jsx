export default function About() {
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
  <span className="eyebrow">About us</span>
  <h1 className="h1">A barn, a roaster and a lot of tasting</h1>
</section>
<section className="story">
  <img className="story-image" src="/assets/barn.png" alt="The barn" />
  <div className="story-copy">
    <h2 className="h2">Started with one bag</h2>
    <p className="lead">In 2016 we bought a second-hand five kilo roaster and one bag of green coffee from a farm in the highlands.</p>
    <p className="body">Ten years on we roast forty tonnes a year, still in the same barn, still tasting every batch before it leaves.</p>
  </div>
</section>
<section className="section">
  <div className="section-head">
    <h2 className="h2">The people behind the roast</h2>
  </div>
  <div className="team">
  <div className="member">
    <img className="avatar" src="/assets/team-1.png" alt="Maya Okafor" />
    <div className="member-copy">
      <span className="h3">Maya Okafor</span>
      <span className="body">Head roaster</span>
    </div>
  </div>
  <div className="member">
    <img className="avatar" src="/assets/team-2.png" alt="Tomás Reyes" />
    <div className="member-copy">
      <span className="h3">Tomás Reyes</span>
      <span className="body">Green buyer</span>
    </div>
  </div>
  <div className="member">
    <img className="avatar" src="/assets/team-3.png" alt="Ines Larsen" />
    <div className="member-copy">
      <span className="h3">Ines Larsen</span>
      <span className="body">Café lead</span>
    </div>
  </div>
  </div>
</section>
<section className="band">
  <div className="band-copy">
    <h2 className="h2">Come and taste with us</h2>
    <p className="lead">Public cuppings every Saturday at ten. No booking needed.</p>
  </div>
  <a className="btn btn-primary" href="/contact"><span>Find the barn</span></a>
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
