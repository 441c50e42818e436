"""Weight-free image measures: CIEDE2000, edges, banded edge F1, SSIM, palette, phash, ink.

Whole-page pixel metrics punish a page that is right but shifted (a 40-px shift drops
global edge F1 from 1.0 to about 0.23) and reward a blank page (white scores a high
SSIM against a mostly white design). The banded measure cuts the reference into bands of
200 CSS px, finds each band's best vertical offset in the candidate (within ±200 CSS px
of the previous band's, so the alignment is monotone), and scores edges there with a
small tolerance; bands are weighted by how many edges the reference has in them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from scipy import ndimage
from scipy.fft import dctn, irfft, next_fast_len, rfft

__all__ = [
    "BandResult",
    "band_metrics",
    "delta_e2000",
    "edges",
    "ink_fraction",
    "palette",
    "palette_coverage",
    "phash",
    "phash_distance",
    "rgb_to_lab",
    "ssim",
    "thumb_distance",
    "to_array",
    "tolerant_f1",
]

Arr = NDArray[np.float64]


def to_array(img: Image.Image, width: int | None = None) -> Arr:
    """RGB as float 0..1, resized to ``width`` (aspect kept; heights never squashed)."""
    img = img.convert("RGB")
    if width is not None and img.width != width:
        if img.width % width == 0:  # an exact factor (1440 -> 480): a box average is exact
            img = img.reduce(img.width // width)
        else:
            height = max(1, round(img.height * width / img.width))
            img = img.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)
    return np.asarray(img, dtype=np.float64) / 255.0


def gray(rgb: Arr) -> Arr:
    """Luma (Rec. 601)."""
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def rgb_to_lab(rgb: Arr) -> Arr:
    """Convert sRGB (0..1, last axis 3) to CIELAB (D65)."""
    c = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = c @ m.T / np.array([0.95047, 1.0, 1.08883])
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


def delta_e2000(lab1: Arr, lab2: Arr) -> Arr:
    """CIEDE2000 colour difference, vectorised over leading axes."""
    l1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    l2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    cbar = (c1 + c2) / 2
    g = 0.5 * (1 - np.sqrt(cbar**7 / (cbar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dl = l2 - l1
    dc = c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0, dh)
    dhh = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    lbar = (l1 + l2) / 2
    cbarp = (c1p + c2p) / 2
    hsum = h1p + h2p
    hbar = np.where(
        c1p * c2p == 0,
        hsum,
        np.where(
            np.abs(h1p - h2p) <= 180,
            hsum / 2,
            np.where(hsum < 360, (hsum + 360) / 2, (hsum - 360) / 2),
        ),
    )
    t = (
        1
        - 0.17 * np.cos(np.radians(hbar - 30))
        + 0.24 * np.cos(np.radians(2 * hbar))
        + 0.32 * np.cos(np.radians(3 * hbar + 6))
        - 0.20 * np.cos(np.radians(4 * hbar - 63))
    )
    dtheta = 30 * np.exp(-(((hbar - 275) / 25) ** 2))
    rc = 2 * np.sqrt(cbarp**7 / (cbarp**7 + 25.0**7))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / np.sqrt(20 + (lbar - 50) ** 2)
    sc = 1 + 0.045 * cbarp
    sh = 1 + 0.015 * cbarp * t
    rt = -np.sin(np.radians(2 * dtheta)) * rc
    out: Arr = np.sqrt(
        (dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh)
    )
    return out


def edges(g: Arr, *, sigma: float = 1.0, low: float = 0.04, high: float = 0.1) -> NDArray[np.bool_]:
    """A Canny-style edge map: smoothing, gradient, thinning, hysteresis (fixed thresholds).

    Fixed thresholds (not relative to the image's strongest edge) keep a blank page
    edge-free instead of promoting its faintest noise to edges.
    """
    s = ndimage.gaussian_filter(g, sigma)
    gx = ndimage.sobel(s, axis=1) / 8.0
    gy = ndimage.sobel(s, axis=0) / 8.0
    mag = np.hypot(gx, gy)
    angle = (np.rad2deg(np.arctan2(gy, gx)) + 180) % 180
    q = np.zeros_like(mag)
    pad = np.pad(mag, 1)
    h, w = mag.shape
    centre = pad[1 : h + 1, 1 : w + 1]
    neighbours = {
        0: (pad[1 : h + 1, 2:], pad[1 : h + 1, :w]),
        45: (pad[:h, 2:], pad[2:, :w]),
        90: (pad[:h, 1 : w + 1], pad[2:, 1 : w + 1]),
        135: (pad[:h, :w], pad[2:, 2:]),
    }
    bins = np.round(angle / 45).astype(int) % 4 * 45
    for deg, (n1, n2) in neighbours.items():
        sel = bins == deg
        keep = sel & (centre >= n1) & (centre >= n2)
        q[keep] = mag[keep]
    strong = q >= high
    weak = q >= low
    labels, count = ndimage.label(weak, structure=np.ones((3, 3)))
    if count == 0:
        return np.zeros_like(weak)
    has_strong = np.zeros(count + 1, dtype=bool)
    has_strong[np.unique(labels[strong])] = True
    has_strong[0] = False
    return np.asarray(has_strong[labels], dtype=bool)


def tolerant_f1(
    ref: NDArray[np.bool_], cand: NDArray[np.bool_], radius: int = 2
) -> tuple[float, float, float]:
    """(precision, recall, F1) of candidate edges against reference edges, ``radius`` px slack."""
    nr, nc = int(ref.sum()), int(cand.sum())
    if nr == 0 and nc == 0:
        return 1.0, 1.0, 1.0
    if nr == 0 or nc == 0:
        return 0.0, 0.0, 0.0
    st = ndimage.generate_binary_structure(2, 1)
    ref_d = ndimage.binary_dilation(ref, st, iterations=radius)
    cand_d = ndimage.binary_dilation(cand, st, iterations=radius)
    p = float((cand & ref_d).sum()) / nc
    r = float((ref & cand_d).sum()) / nr
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def ssim(a: Arr, b: Arr, win: int = 7) -> float:
    """Mean SSIM of two grey images of the same shape (uniform window)."""
    c1, c2 = 0.01**2, 0.03**2
    mu_a = ndimage.uniform_filter(a, win)
    mu_b = ndimage.uniform_filter(b, win)
    va = ndimage.uniform_filter(a * a, win) - mu_a**2
    vb = ndimage.uniform_filter(b * b, win) - mu_b**2
    cov = ndimage.uniform_filter(a * b, win) - mu_a * mu_b
    s = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a**2 + mu_b**2 + c1) * (va + vb + c2))
    return float(s.mean())


@dataclass(frozen=True)
class BandResult:
    """Banded comparison of a candidate page with a reference frame."""

    edge_f1: float
    ssim: float
    height_ratio: float
    offsets: list[int]  # per band, in CSS px
    bands: int


def band_metrics(
    ref_rgb: Arr,
    cand_rgb: Arr,
    css_width: float,
    *,
    band_css: float = 200.0,
    search_css: float = 200.0,
    radius: int = 2,
    ref_edges: NDArray[np.bool_] | None = None,
) -> BandResult:
    """Banded edge F1 and SSIM of ``cand`` against ``ref`` (both at the analysis width).

    ``ref_edges`` is ``edges(gray(ref_rgb))`` when the caller has it already (a
    reference frame checked against many candidates).
    """
    width = ref_rgb.shape[1]
    k = width / css_width  # analysis px per CSS px
    rg, cg = gray(ref_rgb), gray(cand_rgb)
    re_ = edges(rg) if ref_edges is None else ref_edges
    ce = edges(cg)
    hr, hc = rg.shape[0], cg.shape[0]
    band = max(8, round(band_css * k))
    reach = max(4, round(search_css * k))
    # past its end a shorter candidate is blank page (white, no edges)
    tail = reach + band + max(0, hr - hc)
    cpad = np.pad(cg, ((reach, tail), (0, 0)), constant_values=1.0)
    epad = np.pad(ce, ((reach, tail), (0, 0)), constant_values=False)
    total_edges = max(int(re_.sum()), 1)
    prev = 0
    f1s, ssims, weights, offsets = [], [], [], []
    for y0 in range(0, hr, band):
        y1 = min(hr, y0 + band)
        rb = rg[y0:y1]
        lo = max(-reach, prev - reach)
        hi = min(reach, prev + reach)
        top = y0 + lo + reach
        window = cpad[top : y0 + hi + reach + (y1 - y0)]
        # squared difference for every offset at once: Σc² − 2Σrc (Σr² is constant); the
        # band is as wide as the page, so the correlation is 1-D along y, summed over
        # columns in the frequency domain (one inverse transform, not one per column)
        n, L = window.shape[0], rb.shape[0]
        nfft = next_fast_len(n + L - 1, real=True)
        spec = rfft(window, nfft, axis=0) * rfft(rb[::-1], nfft, axis=0)
        cross = irfft(spec.sum(axis=1), nfft)[L - 1 : n]
        rows = np.concatenate([[0.0], np.cumsum((window * window).sum(axis=1))])
        energy = rows[L:] - rows[: n - L + 1]
        ssd = energy - 2 * cross
        steps = np.arange(lo, lo + len(ssd))
        ssd = ssd + 1e-3 * np.abs(steps - prev) * rb.size / max(reach, 1)
        best = int(steps[int(np.argmin(ssd))])
        prev = best
        cy0 = y0 + best + reach
        cb = cpad[cy0 : cy0 + (y1 - y0)]
        eb = epad[cy0 : cy0 + (y1 - y0)]
        _p, _r, f1 = tolerant_f1(re_[y0:y1], eb, radius)
        n_edges = int(re_[y0:y1].sum())
        weights.append(n_edges / total_edges + 0.02)
        f1s.append(f1)
        ssims.append(ssim(rb, cb) if rb.shape[0] >= 7 else 1.0 - float(np.abs(rb - cb).mean()))
        offsets.append(round(best / k))
    w = np.array(weights)
    ratio = min(hr, hc) / max(hr, hc) if max(hr, hc) else 0.0
    if hc == 0 or not ce.any():
        return BandResult(0.0, float(np.average(ssims, weights=w)), ratio, offsets, len(f1s))
    return BandResult(
        float(np.average(f1s, weights=w)),
        float(np.average(ssims, weights=w)),
        ratio,
        offsets,
        len(f1s),
    )


def palette(rgb: Arr, k: int = 12) -> list[tuple[Arr, float]]:
    """The ``k`` main colours (median cut) as (Lab, share of pixels)."""
    img = Image.fromarray(np.clip(rgb * 255, 0, 255).astype(np.uint8))
    if img.width * img.height > 120_000:
        f = (120_000 / (img.width * img.height)) ** 0.5
        img = img.resize((max(1, int(img.width * f)), max(1, int(img.height * f))))
    q = img.quantize(colors=k, method=Image.Quantize.MEDIANCUT)
    pal = np.array((q.getpalette() or [])[: 3 * k], dtype=np.float64).reshape(-1, 3) / 255.0
    counts = np.bincount(np.asarray(q).ravel(), minlength=len(pal))[: len(pal)]
    total = counts.sum() or 1
    return [(rgb_to_lab(pal[i]), counts[i] / total) for i in range(len(pal)) if counts[i] > 0]


def palette_coverage(
    ref: Arr,
    cand: Arr,
    k: int = 12,
    de_max: float = 20.0,
    ref_palette: list[tuple[Arr, float]] | None = None,
) -> float:
    """Σ over the reference palette of share · clip(1 − min ΔE00 to the candidate's / de_max).

    ``ref_palette`` is ``palette(ref, k)`` when the caller has it already.
    """
    rp = palette(ref, k) if ref_palette is None else ref_palette
    cp = palette(cand, k)
    if not rp or not cp:
        return 0.0
    clab = np.stack([c for c, _ in cp])
    score = 0.0
    for lab, share in rp:
        de = float(delta_e2000(np.broadcast_to(lab, clab.shape), clab).min())
        score += share * max(0.0, min(1.0, 1 - de / de_max))
    return score


def phash(rgb: Arr, size: int = 8) -> NDArray[np.bool_]:
    """Perceptual hash (DCT of a 32x32 grey thumbnail, above-median bits)."""
    img = Image.fromarray(np.clip(gray(rgb) * 255, 0, 255).astype(np.uint8))
    small = np.asarray(img.resize((size * 4, size * 4), Image.Resampling.LANCZOS), dtype=np.float64)
    d = dctn(small, norm="ortho")[:size, :size]
    flat = d.ravel()[1:]
    return np.asarray(d > np.median(flat), dtype=bool)


def phash_distance(a: Arr, b: Arr) -> int:
    """Hamming distance of the two images' perceptual hashes (0..64)."""
    return int((phash(a) != phash(b)).sum())


def thumb_distance(a: Arr, b: Arr, size: int = 8) -> float:
    """Mean CIEDE2000 between ``size``x``size`` colour thumbnails of two images.

    A colour-layout comparison: unlike a perceptual hash it is stable under the small
    resampling differences between a 2x export scaled down and a 1x render, which flip
    the hash bits of flat illustrations.
    """

    def thumb(x: Arr) -> Arr:
        img = Image.fromarray(np.clip(x * 255, 0, 255).astype(np.uint8))
        return np.asarray(img.resize((size, size), Image.Resampling.BOX), dtype=np.float64) / 255

    return float(delta_e2000(rgb_to_lab(thumb(a)), rgb_to_lab(thumb(b))).mean())


def ink_fraction(rgb: Arr) -> float:
    """Share of pixels whose grey differs from the median grey by more than 20/255."""
    g = gray(rgb)
    if g.size == 0:
        return 0.0
    return float((np.abs(g - np.median(g)) > 20 / 255).mean())
