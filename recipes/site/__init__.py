"""What the website serves beside its pages, built from the shipped weights for ``make book``: the
"Try it" boxes' models as ONNX (:mod:`recipes.site.web_models`, its steps in
:mod:`recipes.site.web_onnx`), checked against PyTorch and written with their reference answers."""
