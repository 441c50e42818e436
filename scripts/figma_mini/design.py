"""The design description behind the figma-mini pack: brand, products, pages, icons.

Everything the generator (scripts/make_figma_mini.py) turns into a Figma-shaped file,
rendered frames, ground truth and reference apps comes from here. Pages are HTML with
``data-fig="TYPE:Layer name"`` marks on the elements that become Figma nodes;
``data-component`` names an icon or button component, ``data-image`` an image fill.
``{A}`` in a page stands for the asset base path of the app it is written into.
"""

from __future__ import annotations

FILE_KEY = "FmMiniFernhill01"
FILE_NAME = "Fernhill Coffee — Website"

COLORS = {
    "Brand/Primary": "#2F5D50",
    "Brand/Primary Dark": "#244A40",
    "Brand/Accent": "#E9A23B",
    "Neutral/Ink": "#1F2328",
    "Neutral/Muted": "#5B6470",
    "Neutral/Paper": "#FBF8F3",
    "Neutral/Card": "#FFFFFF",
    "Neutral/Line": "#E4DED4",
    "Brand/Mint": "#DCEBE4",
}

# name -> (family, weight, size, line height, letter spacing, uppercase)
TEXT_STYLES = {
    "Display/H1": ("DejaVu Serif", 700, 52, 62, 0.0, False),
    "Display/H2": ("DejaVu Serif", 700, 36, 44, 0.0, False),
    "Heading/H3": ("Liberation Sans", 700, 22, 30, 0.0, False),
    "Body/Large": ("Liberation Sans", 400, 18, 28, 0.0, False),
    "Body/Regular": ("Liberation Sans", 400, 16, 24, 0.0, False),
    "Label/Eyebrow": ("Liberation Sans", 700, 13, 18, 1.5, True),
    "Label/Button": ("Liberation Sans", 700, 16, 20, 0.0, False),
}

PRODUCTS = [
    # id, name, price, section, colour of its picture, one-line description
    (
        "1",
        "Hillside Espresso",
        "$14",
        "Espresso",
        "#7A4E2D",
        "Dark chocolate, molasses, a long sweet finish.",
    ),
    (
        "2",
        "Valley Blend",
        "$12",
        "Espresso",
        "#9C6B3F",
        "Milk chocolate and toasted hazelnut; our everyday shot.",
    ),
    (
        "3",
        "Night Shift Decaf",
        "$13",
        "Espresso",
        "#4E3B31",
        "Sugar-cane decaf with cocoa and dried cherry.",
    ),
    ("4", "Copper Kettle", "$15", "Espresso", "#B5713C", "Caramel, orange peel and a round body."),
    (
        "5",
        "Morning Fog",
        "$16",
        "Filter",
        "#C8A27A",
        "Bergamot, peach and black tea from the highlands.",
    ),
    ("6", "Ridge Walk", "$17", "Filter", "#A8855E", "Red apple, honey and a clean, bright cup."),
    ("7", "Cedar Bench", "$18", "Filter", "#6F5A44", "Cedar, plum and brown sugar, roasted light."),
    ("8", "River Stone", "$15", "Filter", "#8D7B68", "Almond, fig and a soft mineral finish."),
]

PASTRIES = [
    ("Cardamom bun", "$4", "#D9B27C"),
    ("Rye cookie", "$3", "#A67C52"),
    ("Pear galette", "$5", "#E3C08F"),
    ("Oat flapjack", "$3", "#C9A46B"),
]

TEAM = [
    ("Maya Okafor", "Head roaster", "#7F9C8E"),
    ("Tomás Reyes", "Green buyer", "#B98B6E"),
    ("Ines Larsen", "Café lead", "#8C8FB0"),
]

# icon name -> SVG path data on a 24x24 grid (stroke icons)
ICONS = {
    "leaf": "M5 19c8 0 14-6 14-14-8 0-14 6-14 14zm0 0 8-8",
    "truck": "M3 6h11v10H3zm11 4h4l3 3v3h-7zM7 19a2 2 0 1 0 0-.1M17 19a2 2 0 1 0 0-.1",
    "cup": "M4 8h13v5a5 5 0 0 1-5 5H9a5 5 0 0 1-5-5zm13 2h2a2 2 0 0 1 0 4h-2M8 3v3m4-3v3",
    "cart": "M3 4h2l2 11h11l2-8H6M9 20a1 1 0 1 0 0-.1M17 20a1 1 0 1 0 0-.1",
    "menu": "M4 7h16M4 12h16M4 17h16",
    "bean": "M12 3c5 0 8 4 8 9s-3 9-8 9-8-4-8-9 3-9 8-9zm0 0c-3 4 3 14 0 18",
    "pin": "M12 21s7-6 7-12a7 7 0 0 0-14 0c0 6 7 12 7 12zm0-9a3 3 0 1 0 0-.1",
    "clock": "M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zm0 4v5l3 2",
}
ICON_NAMES = {
    "leaf": "Icon/Leaf",
    "truck": "Icon/Truck",
    "cup": "Icon/Cup",
    "cart": "Icon/Cart",
    "menu": "Icon/Menu",
    "bean": "Icon/Bean",
    "pin": "Icon/Pin",
    "clock": "Icon/Clock",
}


def icon(name: str, size: int = 24, cls: str = "icon") -> str:
    """An icon instance."""
    return (
        f'<svg class="{cls}" data-fig="INSTANCE:{ICON_NAMES[name]}" data-component="{name}" '
        f'width="{size}" height="{size}" viewBox="0 0 24 24" fill="none" stroke="currentColor" '
        f'stroke-width="2" stroke-linecap="round" stroke-linejoin="round">'
        f'<path d="{ICONS[name]}"></path></svg>'
    )


def button(label: str, href: str, variant: str = "primary") -> str:
    """A Button instance (primary) or a plain secondary link button."""
    if variant == "primary":
        return (
            f'<a class="btn btn-primary" href="{href}" data-fig="INSTANCE:Button" '
            f'data-component="button-default"><span data-fig="TEXT:Label">{label}</span></a>'
        )
    return (
        f'<a class="btn btn-secondary" href="{href}" data-fig="FRAME:Secondary button">'
        f'<span data-fig="TEXT:Label">{label}</span></a>'
    )


CSS = """
:root {
  --color-primary: #2F5D50;
  --color-primary-dark: #244A40;
  --color-accent: #E9A23B;
  --color-ink: #1F2328;
  --color-muted: #5B6470;
  --color-paper: #FBF8F3;
  --color-card: #FFFFFF;
  --color-line: #E4DED4;
  --color-mint: #DCEBE4;
  --font-body: "Liberation Sans", Arial, sans-serif;
  --font-display: "DejaVu Serif", Georgia, serif;
  --radius-card: 16px;
  --radius-image: 24px;
  --radius-pill: 999px;
  --shadow-card: 0px 4px 12px rgba(31, 35, 40, 0.08);
  --space-section: 96px;
}
* { box-sizing: border-box; margin: 0; padding: 0; }
html, body { background: var(--color-paper); }
body { font-family: var(--font-body); color: var(--color-ink); font-size: 16px; line-height: 24px; }
a { color: inherit; text-decoration: none; }
img { display: block; }
.page { width: 100%; background: var(--color-paper); }
.container { width: 1280px; margin: 0 auto; }
.site-header { height: 80px; padding: 0 80px; display: flex; align-items: center; justify-content: space-between; background: var(--color-paper); border-bottom: 1px solid var(--color-line); }
.logo { display: flex; align-items: center; gap: 10px; color: var(--color-primary); }
.logo-text { font-family: var(--font-display); font-weight: 700; font-size: 24px; line-height: 30px; color: var(--color-primary); }
.nav { display: flex; align-items: center; gap: 36px; }
.nav-link { font-size: 16px; line-height: 24px; font-weight: 700; color: var(--color-ink); }
.nav-icon { color: var(--color-ink); }
.menu-toggle { display: none; color: var(--color-ink); }
.eyebrow { font-size: 13px; line-height: 18px; font-weight: 700; letter-spacing: 1.5px; text-transform: uppercase; color: var(--color-accent); }
.h1 { font-family: var(--font-display); font-weight: 700; font-size: 52px; line-height: 62px; color: var(--color-ink); }
.h2 { font-family: var(--font-display); font-weight: 700; font-size: 36px; line-height: 44px; color: var(--color-ink); }
.h3 { font-size: 22px; line-height: 30px; font-weight: 700; color: var(--color-ink); }
.lead { font-size: 18px; line-height: 28px; color: var(--color-muted); }
.body { font-size: 16px; line-height: 24px; color: var(--color-muted); }
.btn { display: inline-flex; align-items: center; justify-content: center; height: 52px; padding: 0 28px; border-radius: var(--radius-pill); font-size: 16px; line-height: 20px; font-weight: 700; }
.btn-primary { background: var(--color-primary); color: #FFFFFF; }
.btn-primary:hover, .btn-primary.is-hover { background: var(--color-primary-dark); }
.btn-secondary { background: transparent; color: var(--color-primary); border: 2px solid var(--color-primary); }
.hero { padding: 72px 80px 88px; display: flex; align-items: center; gap: 64px; }
.hero-copy { width: 576px; display: flex; flex-direction: column; gap: 20px; }
.hero-actions { display: flex; gap: 16px; margin-top: 12px; }
.hero-image { width: 640px; height: 460px; border-radius: var(--radius-image); object-fit: cover; }
.features { padding: 0 80px 96px; display: flex; gap: 32px; }
.feature { flex: 1; background: var(--color-card); border-radius: var(--radius-card); padding: 32px; box-shadow: var(--shadow-card); display: flex; flex-direction: column; gap: 12px; }
.feature-icon { width: 48px; height: 48px; border-radius: 12px; background: var(--color-mint); color: var(--color-primary); display: flex; align-items: center; justify-content: center; }
.section { padding: 0 80px 96px; }
.section-head { display: flex; justify-content: space-between; align-items: flex-end; margin-bottom: 32px; }
.link-more { font-weight: 700; color: var(--color-primary); font-size: 16px; line-height: 24px; }
.grid-3 { display: flex; gap: 32px; }
.grid-4 { display: flex; flex-wrap: wrap; gap: 32px; }
.card { background: var(--color-card); border-radius: var(--radius-card); box-shadow: var(--shadow-card); overflow: hidden; display: flex; flex-direction: column; }
.grid-3 .card { width: 405px; }
.grid-4 .card { width: 296px; }
.card-image { width: 100%; height: 260px; object-fit: cover; }
.grid-4 .card-image { height: 220px; }
.card-body { padding: 20px 24px 24px; display: flex; flex-direction: column; gap: 6px; }
.price { font-size: 16px; line-height: 24px; font-weight: 700; color: var(--color-primary); }
.band { margin: 0 80px 96px; padding: 56px 64px; border-radius: var(--radius-image); background: var(--color-primary); display: flex; justify-content: space-between; align-items: center; }
.band .h2 { color: #FFFFFF; }
.band .lead { color: var(--color-mint); }
.band-copy { width: 560px; display: flex; flex-direction: column; gap: 12px; }
.band-form { display: flex; gap: 12px; }
.input { width: 320px; height: 52px; border-radius: var(--radius-pill); background: var(--color-card); border: 1px solid var(--color-line); padding: 0 24px; display: flex; align-items: center; }
.placeholder { font-size: 16px; line-height: 24px; color: var(--color-muted); }
.band .btn-primary { background: var(--color-accent); color: var(--color-ink); }
.band .btn-primary:hover { background: #D18E2C; }
.site-footer { background: var(--color-ink); padding: 56px 80px; display: flex; justify-content: space-between; }
.footer-col { display: flex; flex-direction: column; gap: 10px; }
.footer-title { font-size: 16px; line-height: 24px; font-weight: 700; color: #FFFFFF; }
.footer-text { font-size: 14px; line-height: 22px; color: #B7BDC6; }
.page-title { padding: 64px 80px 40px; display: flex; flex-direction: column; gap: 12px; }
.menu-section { padding: 0 80px 72px; }
.menu-section .h2 { margin-bottom: 28px; }
.guide { margin: 0 80px 96px; background: var(--color-card); border-radius: var(--radius-card); padding: 48px; display: flex; flex-direction: column; gap: 24px; box-shadow: var(--shadow-card); }
.guide-row { display: flex; justify-content: space-between; border-bottom: 1px solid var(--color-line); padding-bottom: 16px; }
.guide-name { font-size: 18px; line-height: 28px; font-weight: 700; }
.guide-ratio { font-size: 18px; line-height: 28px; color: var(--color-muted); }
.breadcrumb { padding: 32px 80px 0; font-size: 14px; line-height: 22px; color: var(--color-muted); }
.product { padding: 32px 80px 96px; display: flex; gap: 64px; }
.product-image { width: 640px; height: 560px; border-radius: var(--radius-image); object-fit: cover; }
.product-info { width: 576px; display: flex; flex-direction: column; gap: 20px; }
.product-price { font-size: 28px; line-height: 36px; font-weight: 700; color: var(--color-primary); }
.sizes { display: flex; gap: 12px; }
.size { width: 72px; height: 44px; border-radius: var(--radius-pill); border: 1px solid var(--color-line); background: var(--color-card); display: flex; align-items: center; justify-content: center; font-weight: 700; font-size: 16px; line-height: 24px; }
.size.is-selected { background: var(--color-primary); color: #FFFFFF; border-color: var(--color-primary); }
.facts { display: flex; flex-direction: column; gap: 8px; border-top: 1px solid var(--color-line); padding-top: 20px; }
.story { padding: 0 80px 96px; display: flex; gap: 64px; align-items: center; }
.story-image { width: 560px; height: 400px; border-radius: var(--radius-image); object-fit: cover; }
.story-copy { width: 656px; display: flex; flex-direction: column; gap: 16px; }
.team { display: flex; gap: 32px; }
.member { width: 405px; display: flex; align-items: center; gap: 20px; background: var(--color-card); border-radius: var(--radius-card); padding: 24px; box-shadow: var(--shadow-card); }
.avatar { width: 88px; height: 88px; border-radius: 44px; object-fit: cover; }
.member-copy { display: flex; flex-direction: column; gap: 4px; }
.contact { padding: 0 80px 96px; display: flex; gap: 64px; align-items: flex-start; }
.form { width: 720px; background: var(--color-card); border-radius: var(--radius-card); padding: 40px; display: flex; flex-direction: column; gap: 20px; box-shadow: var(--shadow-card); }
.field { display: flex; flex-direction: column; gap: 8px; }
.label { font-size: 14px; line-height: 20px; font-weight: 700; color: var(--color-ink); }
.form .input { width: 100%; border-radius: 12px; }
.textarea { height: 140px; align-items: flex-start; padding-top: 14px; }
.visit { width: 496px; background: var(--color-mint); border-radius: var(--radius-card); padding: 40px; display: flex; flex-direction: column; gap: 16px; }
.visit-row { display: flex; gap: 12px; align-items: flex-start; color: var(--color-primary); }
@media (max-width: 1279px) {
  .hero, .story, .product, .contact { flex-direction: column; align-items: stretch; }
  .hero-copy, .story-copy, .product-info, .form, .visit, .band-copy { width: 100%; }
  .hero-image, .story-image, .product-image { width: 100%; }
  .grid-3, .team { flex-wrap: wrap; }
  .grid-3 .card, .member { width: calc(50% - 16px); }
  .band { flex-direction: column; align-items: stretch; gap: 24px; }
  .band-form { flex-wrap: wrap; }
}
@media (max-width: 720px) {
  .site-header { padding: 0 20px; height: 64px; }
  .nav { display: none; }
  .menu-toggle { display: block; }
  .logo-text { font-size: 22px; line-height: 28px; }
  .hero { flex-direction: column; padding: 32px 20px 48px; gap: 28px; align-items: stretch; }
  .hero-copy { width: 100%; gap: 16px; }
  .h1 { font-size: 34px; line-height: 42px; }
  .h2 { font-size: 28px; line-height: 36px; }
  .hero-actions { flex-direction: column; }
  .hero-image { width: 100%; height: 260px; }
  .features { flex-direction: column; padding: 0 20px 48px; gap: 16px; }
  .feature { padding: 24px; }
  .section { padding: 0 20px 48px; }
  .section-head { flex-direction: column; align-items: flex-start; gap: 8px; margin-bottom: 20px; }
  .grid-3 { flex-direction: column; gap: 20px; }
  .grid-3 .card { width: 100%; }
  .card-image { height: 220px; }
  .band { margin: 0 20px 48px; padding: 32px 24px; flex-direction: column; align-items: stretch; gap: 24px; }
  .band-copy { width: 100%; }
  .band-form { flex-direction: column; }
  .input { width: 100%; }
  .site-footer { flex-direction: column; gap: 28px; padding: 40px 20px; }
  .menu-section, .page-title, .story, .contact, .product, .breadcrumb { padding-left: 20px; padding-right: 20px; }
  .guide { margin: 0 20px 48px; padding: 24px; }
  .guide-row { flex-direction: column; gap: 4px; }
  .grid-4 .card { width: 100%; }
  .team { flex-direction: column; }
  .member { width: 100%; }
  .form, .visit { padding: 24px; }
}
"""


def header() -> str:
    """The site header (desktop nav, mobile menu toggle)."""
    return f"""
<header class="site-header" data-fig="FRAME:Header">
  <a class="logo" href="/" data-fig="FRAME:Logo">{icon("bean", 28)}<span class="logo-text" data-fig="TEXT:Fernhill">Fernhill</span></a>
  <nav class="nav" data-fig="FRAME:Navigation">
    <a class="nav-link" href="/menu" data-fig="TEXT:Menu">Menu</a>
    <a class="nav-link" href="/about" data-fig="TEXT:About">About</a>
    <a class="nav-link" href="/contact" data-fig="TEXT:Contact">Contact</a>
    {icon("cart", 24, "icon nav-icon")}
  </nav>
  {icon("menu", 28, "icon menu-toggle")}
</header>"""


def footer() -> str:
    """The site footer."""
    return """
<footer class="site-footer" data-fig="FRAME:Footer">
  <div class="footer-col" data-fig="FRAME:Footer brand">
    <span class="footer-title" data-fig="TEXT:Fernhill Coffee Roasters">Fernhill Coffee Roasters</span>
    <span class="footer-text" data-fig="TEXT:Address">14 Orchard Lane, Fernhill Valley</span>
  </div>
  <div class="footer-col" data-fig="FRAME:Footer hours">
    <span class="footer-title" data-fig="TEXT:Opening hours">Opening hours</span>
    <span class="footer-text" data-fig="TEXT:Hours">Mon to Sat, 7am to 5pm</span>
  </div>
  <div class="footer-col" data-fig="FRAME:Footer legal">
    <span class="footer-title" data-fig="TEXT:Stay in touch">Stay in touch</span>
    <span class="footer-text" data-fig="TEXT:Copyright">© 2026 Fernhill Coffee. Roasted with care.</span>
  </div>
</footer>"""


def product_card(p: tuple[str, ...], base: str = "{A}") -> str:
    """A product card linking to its page."""
    pid, name, price = p[0], p[1], p[2]
    return f"""
<a class="card" href="/product/{pid}" data-fig="FRAME:Product card">
  <img class="card-image" src="{base}/assets/product-{pid}.png" alt="{name}" data-fig="RECTANGLE:Product photo" data-image="product-{pid}">
  <div class="card-body" data-fig="FRAME:Card body">
    <span class="h3" data-fig="TEXT:Product name">{name}</span>
    <span class="price" data-fig="TEXT:Price">{price}</span>
  </div>
</a>"""


def page_home() -> str:
    """The home page (desktop and, at 390 px, the mobile frame)."""
    features = [
        (
            "leaf",
            "Traceable beans",
            "Every lot is bought from farms we visit, and the price we paid is on the bag.",
        ),
        (
            "truck",
            "Roasted to order",
            "We roast on Mondays and Thursdays and ship the same afternoon.",
        ),
        (
            "cup",
            "Brewed with care",
            "Tell us how you brew and we will grind and recommend to match.",
        ),
    ]
    cards = "".join(
        f"""
  <div class="feature" data-fig="FRAME:Feature card">
    <div class="feature-icon" data-fig="FRAME:Icon badge">{icon(ic)}</div>
    <span class="h3" data-fig="TEXT:Feature title">{title}</span>
    <p class="body" data-fig="TEXT:Feature text">{text}</p>
  </div>"""
        for ic, title, text in features
    )
    picks = "".join(product_card(p) for p in PRODUCTS[:3])
    return f"""
<main class="page" data-fig="PAGE">
{header()}
<section class="hero" data-fig="FRAME:Hero">
  <div class="hero-copy" data-fig="FRAME:Hero copy">
    <span class="eyebrow" data-fig="TEXT:Eyebrow">Small-batch roasters</span>
    <h1 class="h1" data-fig="TEXT:Headline">Coffee roasted on the hill, poured in the valley</h1>
    <p class="lead" data-fig="TEXT:Intro">Seasonal single origins and a house blend, roasted twice a week in our barn and delivered fresh to your door.</p>
    <div class="hero-actions" data-fig="FRAME:Actions">
      {button("Shop the menu", "/menu")}
      {button("Our story", "/about", "secondary")}
    </div>
  </div>
  <img class="hero-image" src="{{A}}/assets/hero.png" alt="Roastery on the hill" data-fig="RECTANGLE:Hero photo" data-image="hero">
</section>
<section class="features" data-fig="FRAME:Features">{cards}
</section>
<section class="section" data-fig="FRAME:Picks">
  <div class="section-head" data-fig="FRAME:Picks heading">
    <h2 class="h2" data-fig="TEXT:Section title">This week's picks</h2>
    <a class="link-more" href="/menu" data-fig="TEXT:See the full menu">See the full menu</a>
  </div>
  <div class="grid-3" data-fig="FRAME:Cards">{picks}
  </div>
</section>
<section class="band" data-fig="FRAME:Newsletter">
  <div class="band-copy" data-fig="FRAME:Newsletter copy">
    <h2 class="h2" data-fig="TEXT:Newsletter title">Fresh roast, every other Monday</h2>
    <p class="lead" data-fig="TEXT:Newsletter text">One short letter about what is in the roaster and what is worth brewing.</p>
  </div>
  <div class="band-form" data-fig="FRAME:Signup">
    <div class="input" data-fig="FRAME:Email field"><span class="placeholder" data-fig="TEXT:Placeholder">Your email address</span></div>
    {button("Subscribe", "/contact")}
  </div>
</section>
{footer()}
</main>"""


def page_menu() -> str:
    """The menu page: a tall page of product grids and a brewing guide."""
    sections = []
    for title in ("Espresso", "Filter"):
        cards = "".join(product_card(p) for p in PRODUCTS if p[3] == title)
        sections.append(
            f"""
<section class="menu-section" data-fig="FRAME:{title} section">
  <h2 class="h2" data-fig="TEXT:Section title">{title}</h2>
  <div class="grid-4" data-fig="FRAME:Grid">{cards}
  </div>
</section>"""
        )
    pastry_cards = "".join(
        f"""
<div class="card" data-fig="FRAME:Pastry card">
  <img class="card-image" src="{{A}}/assets/pastry-{i + 1}.png" alt="{name}" data-fig="RECTANGLE:Pastry photo" data-image="pastry-{i + 1}">
  <div class="card-body" data-fig="FRAME:Card body">
    <span class="h3" data-fig="TEXT:Pastry name">{name}</span>
    <span class="price" data-fig="TEXT:Price">{price}</span>
  </div>
</div>"""
        for i, (name, price, _c) in enumerate(PASTRIES)
    )
    sections.append(
        f"""
<section class="menu-section" data-fig="FRAME:Pastries section">
  <h2 class="h2" data-fig="TEXT:Section title">From the bakery</h2>
  <div class="grid-4" data-fig="FRAME:Grid">{pastry_cards}
  </div>
</section>"""
    )
    guide = "".join(
        f"""
  <div class="guide-row" data-fig="FRAME:Guide row">
    <span class="guide-name" data-fig="TEXT:Method">{m}</span>
    <span class="guide-ratio" data-fig="TEXT:Ratio">{r}</span>
  </div>"""
        for m, r in (
            ("Espresso", "18 g in, 36 g out, 28 seconds"),
            ("Pour-over", "15 g to 250 g water at 94 °C"),
            ("French press", "30 g to 500 g water, four minutes"),
            ("Cold brew", "100 g to 1 litre, sixteen hours in the fridge"),
        )
    )
    return f"""
<main class="page" data-fig="PAGE">
{header()}
<section class="page-title" data-fig="FRAME:Title">
  <span class="eyebrow" data-fig="TEXT:Eyebrow">Roasted this week</span>
  <h1 class="h1" data-fig="TEXT:Headline">Our menu</h1>
  <p class="lead" data-fig="TEXT:Intro">Whole beans in 250 g bags, ground to order on request.</p>
</section>
{"".join(sections)}
<section class="guide" data-fig="FRAME:Brewing guide">
  <h2 class="h2" data-fig="TEXT:Guide title">Brewing guide</h2>{guide}
</section>
{footer()}
</main>"""


def page_product(p: tuple[str, ...]) -> str:
    """A product page."""
    pid, name, price, section, _c, desc = p
    related = "".join(product_card(q) for q in PRODUCTS if q[0] != pid and q[3] == section)
    return f"""
<main class="page" data-fig="PAGE">
{header()}
<div class="breadcrumb" data-fig="TEXT:Breadcrumb">Menu / {section} / {name}</div>
<section class="product" data-fig="FRAME:Product">
  <img class="product-image" src="{{A}}/assets/product-{pid}.png" alt="{name}" data-fig="RECTANGLE:Product photo" data-image="product-{pid}">
  <div class="product-info" data-fig="FRAME:Product info">
    <span class="eyebrow" data-fig="TEXT:Eyebrow">{section}</span>
    <h1 class="h1" data-fig="TEXT:Product name">{name}</h1>
    <span class="product-price" data-fig="TEXT:Price">{price}</span>
    <p class="lead" data-fig="TEXT:Description">{desc}</p>
    <div class="sizes" data-fig="FRAME:Sizes">
      <span class="size is-selected" data-fig="TEXT:250 g">250 g</span>
      <span class="size" data-fig="TEXT:500 g">500 g</span>
      <span class="size" data-fig="TEXT:1 kg">1 kg</span>
    </div>
    {button("Add to cart", "/menu")}
    <div class="facts" data-fig="FRAME:Facts">
      <span class="body" data-fig="TEXT:Fact">Roasted on Mondays and Thursdays</span>
      <span class="body" data-fig="TEXT:Fact">Free delivery over $40</span>
    </div>
  </div>
</section>
<section class="section" data-fig="FRAME:Related">
  <div class="section-head" data-fig="FRAME:Related heading">
    <h2 class="h2" data-fig="TEXT:Section title">You might also like</h2>
  </div>
  <div class="grid-3" data-fig="FRAME:Cards">{related}
  </div>
</section>
{footer()}
</main>"""


def page_about() -> str:
    """The about page."""
    members = "".join(
        f"""
  <div class="member" data-fig="FRAME:Team member">
    <img class="avatar" src="{{A}}/assets/team-{i + 1}.png" alt="{n}" data-fig="RECTANGLE:Portrait" data-image="team-{i + 1}">
    <div class="member-copy" data-fig="FRAME:Member copy">
      <span class="h3" data-fig="TEXT:Name">{n}</span>
      <span class="body" data-fig="TEXT:Role">{r}</span>
    </div>
  </div>"""
        for i, (n, r, _c) in enumerate(TEAM)
    )
    return f"""
<main class="page" data-fig="PAGE">
{header()}
<section class="page-title" data-fig="FRAME:Title">
  <span class="eyebrow" data-fig="TEXT:Eyebrow">About us</span>
  <h1 class="h1" data-fig="TEXT:Headline">A barn, a roaster and a lot of tasting</h1>
</section>
<section class="story" data-fig="FRAME:Story">
  <img class="story-image" src="{{A}}/assets/barn.png" alt="The barn" data-fig="RECTANGLE:Barn photo" data-image="barn">
  <div class="story-copy" data-fig="FRAME:Story copy">
    <h2 class="h2" data-fig="TEXT:Story title">Started with one bag</h2>
    <p class="lead" data-fig="TEXT:Story text">In 2016 we bought a second-hand five kilo roaster and one bag of green coffee from a farm in the highlands.</p>
    <p class="body" data-fig="TEXT:Story text 2">Ten years on we roast forty tonnes a year, still in the same barn, still tasting every batch before it leaves.</p>
  </div>
</section>
<section class="section" data-fig="FRAME:Team section">
  <div class="section-head" data-fig="FRAME:Team heading">
    <h2 class="h2" data-fig="TEXT:Section title">The people behind the roast</h2>
  </div>
  <div class="team" data-fig="FRAME:Team">{members}
  </div>
</section>
<section class="band" data-fig="FRAME:Visit band">
  <div class="band-copy" data-fig="FRAME:Visit copy">
    <h2 class="h2" data-fig="TEXT:Visit title">Come and taste with us</h2>
    <p class="lead" data-fig="TEXT:Visit text">Public cuppings every Saturday at ten. No booking needed.</p>
  </div>
  {button("Find the barn", "/contact")}
</section>
{footer()}
</main>"""


def page_contact() -> str:
    """The contact page."""
    fields = "".join(
        f"""
    <div class="field" data-fig="FRAME:Field">
      <span class="label" data-fig="TEXT:Label">{label}</span>
      <div class="input{extra}" data-fig="FRAME:Input"><span class="placeholder" data-fig="TEXT:Placeholder">{ph}</span></div>
    </div>"""
        for label, ph, extra in (
            ("Name", "Your full name", ""),
            ("Email", "you@example.com", ""),
            ("Message", "What can we help with?", " textarea"),
        )
    )
    return f"""
<main class="page" data-fig="PAGE">
{header()}
<section class="page-title" data-fig="FRAME:Title">
  <span class="eyebrow" data-fig="TEXT:Eyebrow">Contact</span>
  <h1 class="h1" data-fig="TEXT:Headline">Say hello</h1>
  <p class="lead" data-fig="TEXT:Intro">Wholesale, subscriptions or a question about your grinder: we answer within a day.</p>
</section>
<section class="contact" data-fig="FRAME:Contact">
  <div class="form" data-fig="FRAME:Form">{fields}
    {button("Send message", "/contact")}
  </div>
  <div class="visit" data-fig="FRAME:Visit card">
    <h2 class="h3" data-fig="TEXT:Visit title">Visit the barn</h2>
    <div class="visit-row" data-fig="FRAME:Address row">{icon("pin")}<span class="body" data-fig="TEXT:Address">14 Orchard Lane, Fernhill Valley</span></div>
    <div class="visit-row" data-fig="FRAME:Hours row">{icon("clock")}<span class="body" data-fig="TEXT:Hours">Mon to Sat, 7am to 5pm</span></div>
  </div>
</section>
{footer()}
</main>"""


def page_components() -> str:
    """The components page: every icon, and the button's two states."""
    icons = "".join(
        f'<div class="comp-cell">'
        f'<svg class="icon" data-fig="COMPONENT:{ICON_NAMES[n]}" data-component="{n}" width="24" '
        f'height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" '
        f'stroke-linecap="round" stroke-linejoin="round"><path d="{ICONS[n]}"></path></svg></div>'
        for n in ICONS
    )
    return f"""
<main class="page comp-page" data-fig="PAGE">
  <div class="comp-row" data-fig="FRAME:Icons">{icons}</div>
  <div class="comp-row" data-fig="COMPONENT_SET:Button">
    <a class="btn btn-primary" data-fig="COMPONENT:State=Default" data-component="button-default"><span data-fig="TEXT:Label">Button</span></a>
    <a class="btn btn-primary is-hover" data-fig="COMPONENT:State=Hover" data-component="button-hover"><span data-fig="TEXT:Label">Button</span></a>
  </div>
</main>"""


COMPONENTS_CSS = """
.comp-page { padding: 40px; display: flex; flex-direction: column; gap: 40px; width: 640px; }
.comp-row { display: flex; gap: 24px; align-items: center; color: var(--color-ink); }
.comp-cell { width: 24px; height: 24px; }
"""

# frame name -> (route in the apps, page builder key, viewport width, page on the canvas)
FRAMES = [
    ("Home", "/", "home", 1440, "Desktop"),
    ("Menu", "/menu", "menu", 1440, "Desktop"),
    ("Product", "/product/1", "product", 1440, "Desktop"),
    ("About", "/about", "about", 1440, "Desktop"),
    ("Contact", "/contact", "contact", 1440, "Desktop"),
    ("Home — Mobile", "/", "home", 390, "Mobile"),
]

# task id -> (title, frames by name, manifest routes, tags)
TASKS = {
    "landing-page": (
        "Landing page, desktop and mobile",
        ["Home", "Home — Mobile"],
        {"Home": "/", "Home — Mobile": "/"},
        {"category": "landing-page", "asset_density": "medium", "route_complexity": "single"},
    ),
    "shop-pages": (
        "Menu and product pages",
        ["Menu", "Product"],
        {"Menu": "/menu", "Product": "/product/:id"},
        {"category": "e-commerce", "asset_density": "high", "route_complexity": "parametric"},
    ),
    "company-pages": (
        "About and contact pages",
        ["About", "Contact"],
        {"About": "/about", "Contact": "/contact"},
        {"category": "portfolio", "asset_density": "low", "route_complexity": "multi-route"},
    ),
}
