"""Widgets that still work in the static website: every view precomputed, switched in the browser.

A static page has no kernel, so a widget cannot recompute anything. These explorers render
every view in advance (one small matplotlib PNG per view), put the views in an ipywidgets 8
``Stack``, and tie the controls to the stacks with ``widgets.jslink``. The link is part of the
page's saved widget state and runs in plain JavaScript, so choosing a layer or a head switches
the picture on the website as in a live notebook (``book/_vendor/jupyter-widgets/README.md``
says how the widget renderer is served offline).

First used in the book's "What comes out of BERT" chapter (the attention explorer).
"""

from __future__ import annotations

import base64
import html
import io

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image


def figure_png(fig, *, dpi: int = 80, colors: int = 64, close: bool = True) -> bytes:
    """A matplotlib figure as PNG bytes with a small palette (about 3x smaller than RGBA)."""
    fig.set_dpi(dpi)
    fig.canvas.draw()
    rgb = np.asarray(fig.canvas.buffer_rgba())[:, :, :3]  # [height, width, 3]
    if close:
        plt.close(fig)
    out = io.BytesIO()
    Image.fromarray(rgb).quantize(colors=colors).save(out, format="PNG")
    return out.getvalue()


def attention_pngs(layers, tokens: list[str]) -> list[list[bytes]]:
    """Every head's attention matrix as a small PNG: ``pngs[layer][head]``.

    Args:
        layers: L arrays of shape [heads, T, T] (rows = queries, columns = keys).
        tokens: the T token strings, written on both axes.
    One figure is laid out once and only its picture and title change from head to head
    (faster than a new figure per head). Each head gets its own colour scale,
    from 0 to its largest weight, which the title prints.
    """
    size = 1.0 + 0.22 * len(tokens)
    fig, ax = plt.subplots(figsize=(size + 0.4, size))
    image = ax.imshow(np.zeros((len(tokens), len(tokens))), cmap="viridis")
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=7)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=7)
    ax.set_xlabel("attended to (key)", fontsize=8)
    ax.set_ylabel("attending (query)", fontsize=8)
    title = ax.set_title("layer 1, head 1 (max 1.00)", fontsize=9)  # room for every title
    fig.tight_layout()
    pngs = []
    for i, layer in enumerate(layers):
        layer = np.asarray(layer)  # [heads, T, T]
        pngs.append([])
        for h, weights in enumerate(layer):
            image.set_data(weights)
            image.set_clim(0.0, float(weights.max()))
            title.set_text(f"layer {i + 1}, head {h + 1} (max {weights.max():.2f})")
            pngs[-1].append(figure_png(fig, close=False))
    plt.close(fig)
    return pngs


def image_stack(pngs: list[bytes], descriptions: list[str] | None = None) -> widgets.Stack:
    """A ``Stack`` showing one of several precomputed PNGs (the first one to begin with).

    Each PNG is an ``<img>`` in an ``HTML`` widget, its description the ``alt`` text screen
    readers and axe's image-alt rule read. (ipywidgets' ``Image`` has no alt, and a ``tooltip`` on
    it stops the static page from drawing it: the widget view reads a ``description`` an Image
    does not have.)"""
    descriptions = descriptions or [""] * len(pngs)
    return widgets.Stack(
        [
            widgets.HTML(
                f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" '
                f'alt="{html.escape(d, quote=True)}">'
            )
            for png, d in zip(pngs, descriptions)
        ],
        selected_index=0,
    )


def attention_explorer(attentions, tokens: list[str]) -> widgets.VBox:
    """Choose a layer and a head; see that head's attention over ``tokens``.

    Args:
        attentions: the model's ``output_attentions`` for ONE sequence, as a sequence of L
            tensors or arrays of shape [heads, T, T] (e.g. ``[a[0] for a in out.attentions]``).
        tokens: the T token strings.
    Returns:
        A VBox of two dropdowns over two levels of ``Stack``: an outer stack with one inner
        stack per layer, each inner stack with one image per head. The layer dropdown's
        ``index`` is jslinked to the outer stack, the head dropdown's to every inner stack.
    """
    layers = [np.asarray(a) for a in attentions]  # L x [heads, T, T]
    heads = layers[0].shape[0]
    pngs = attention_pngs(layers, tokens)  # [L][heads] PNG bytes
    layer_choice = widgets.Dropdown(
        options=[f"layer {i + 1}" for i in range(len(layers))], index=0, description="Layer"
    )
    head_choice = widgets.Dropdown(
        options=[f"head {h + 1}" for h in range(heads)], index=0, description="Head"
    )
    per_layer = []
    for i, layer_pngs in enumerate(pngs):
        inner = image_stack(
            layer_pngs,
            [
                f"Heat map of the attention weights of layer {i + 1}, head {h + 1}: "
                "one row per token, how much it attends to each token"
                for h in range(heads)
            ],
        )
        widgets.jslink((head_choice, "index"), (inner, "selected_index"))
        per_layer.append(inner)
    outer = widgets.Stack(per_layer, selected_index=0)
    widgets.jslink((layer_choice, "index"), (outer, "selected_index"))
    return widgets.VBox([widgets.HBox([layer_choice, head_choice]), outer])
