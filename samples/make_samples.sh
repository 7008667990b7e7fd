#!/bin/sh
# Regenerate samples/: the self-played matches and their rendered pages (deterministic:
# the same commands give byte-identical files). Run from the repository root:
#     sh samples/make_samples.sh
set -eu
PY=${PY:-.venv/bin/python}
DIGITISE=${DIGITISE:-.venv/bin/digitise}
GLYPHS=${GLYPHS:-../shared/data/digits.png}

# 1. The matches, by engine self-play (fixed seeds, see samples/make_samples.py).
"$PY" samples/make_samples.py samples

# 2. The pages: light and medium damage, 150 dpi, JPEG (keeps the folder small).
synth() {  # name level seed [format]
    "$DIGITISE" synth "samples/$1.mat" -o "samples/$1/$2" --degrade "$2" --seed "$3" \
        --dpi 150 --format "${4:-jpg}" --glyphs "$GLYPHS" --force
}
synth alice-bruno light 1
synth alice-bruno medium 2
synth chen-dana light 3
# One multi-page PDF, as a scanner writes it (pages.pdf instead of page images).
synth chen-dana medium 4 pdf

# 3. The blank note, as printed.
"$DIGITISE" template --paper a4 -o samples/blank-a4.pdf --force
"$DIGITISE" template --paper letter -o samples/blank-letter.pdf --force
du -sh samples
