"""The commands around a scan: print the note (template), fit another print (layout), review, train, synth."""

from __future__ import annotations

from pathlib import Path

import click

from digitise.cli.frame import OUTPUT_FILE, PATH, cli, counted, one_line, reports_errors, say


@cli.command(short_help="Print the blank recording note.")
@click.option("--paper", default="a4", show_default=True, help="Paper: a4 or letter (landscape), or a geometry JSON.")
@click.option("-o", "--output", type=OUTPUT_FILE,
              help="FILE.pdf (vector, print at 100 %), FILE.png (raster at --dpi) or FILE.json (the geometry).")
@click.option("--dpi", type=click.IntRange(50, 1200), default=300, show_default=True, help="Resolution of a PNG.")
@click.option("--json", "as_json", is_flag=True,
              help="The geometry JSON instead (for --paper FILE.json): printed, or written to -o FILE.json.")
@click.option("--force", is_flag=True, help="Replace an existing output.")
@reports_errors
def template(paper: str, output: Path | None, dpi: int, as_json: bool, force: bool) -> None:
    """Print the blank recording note (PDF or PNG), or its geometry (--json)."""
    # imported here: keeps `digitise --help` light (NumPy, OpenCV)
    from digitise.notation.template import load_template
    from digitise.sheet.printing import write_template

    geometry = load_template(paper)
    if as_json:
        if output is None:
            click.echo(geometry.to_json(), nl=False)
            return
        if output.suffix.lower() != ".json":
            raise click.UsageError(f"--json writes the geometry as JSON: name the file FILE.json, not {output.name}")
    if output is None:
        raise click.UsageError("give -o FILE.pdf or -o FILE.png (or --json)")
    written = write_template(geometry, output, dpi=dpi, overwrite=force)
    what = "geometry" if written.suffix.lower() == ".json" else "note"
    say(f"{written}: {geometry.name} {what}, {geometry.page_mm[0]:g} x {geometry.page_mm[1]:g} mm")


@cli.command(short_help="Fit another print's boards from a page into a template JSON.")
@click.argument("page", type=PATH)
@click.option("-o", "--output", required=True, type=OUTPUT_FILE,
              help="The template JSON to write (then: scan/batch/read --template FILE.json).")
@click.option("--overlay", type=OUTPUT_FILE, help="A PNG of the page with the fitted squares drawn over it, to check.")
@click.option("--name", help="The template's name (default: the output's file name).")
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@reports_errors
def layout(page: Path, output: Path, overlay: Path | None, name: str | None, force: bool) -> None:
    """Fit the boards of a note of another print (no markers, other sizes and spacing) from the ruled lines of
    PAGE (its first page: blank or filled) and write them as a template for --template."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import layout_to_file

    summary = layout_to_file(page, output, overlay=overlay, name=name, overwrite=force)
    placed = summary.boards - summary.seen
    extra = f" ({placed} placed from the grid: check the overlay)" if placed else ""
    header = ("header boxes found" if summary.header
              else "no header boxes found: give the names and length with --players and --length")
    say(one_line(f"{summary.output}: {summary.boards} boards fitted{extra}, page turned {round(summary.turn, 1) + 0.0:+.1f} degrees"
                 + f"; {header}" + (f"; overlay {summary.overlay}" if summary.overlay else "")))


@cli.command(short_help="Open the review page to fix flagged turns.")
@click.argument("report", type=PATH)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Keep 127.0.0.1 unless you mean to share the page.")
@click.option("--readings", type=PATH,
              help="The readings JSON, when the report does not name it.")
@click.option("--learn", "learn_dir", type=PATH,
              help="Save corrected cells as labelled crops here, for `digitise train`.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@reports_errors
def review(report: Path, port: int, host: str, readings: Path | None, learn_dir: Path | None,
           no_browser: bool) -> None:
    """Serve the review page for REPORT.json: fix flagged turns; each fix is written into the match's .mat.

    REPORT may be a folder (a batch's output): one page lists its matches.
    """
    # imported here: keeps `digitise --help` light (the review server, NumPy)
    from digitise.review.server import make_server

    server = make_server(report, host=host, port=port, readings=readings, learn_dir=learn_dir)
    if server.session is not None:
        mat = server.session.mat_path()
        written = f" and written into {mat}" if mat is not None else ""
        say(f"Review page: {server.url}  (corrections saved to {server.session.corrections_file}{written}; "
            "Ctrl-C to stop)")
    elif server.folder is not None:
        count = len(server.folder.reports)
        say(f"Review page: {server.url}  ({counted(count, 'match', 'matches')} in "
            f"{server.folder.folder}; each one's corrections saved beside its report and written into "
            "its .mat; Ctrl-C to stop)")
    if host in ("0.0.0.0", "::", ""):
        # imported here: keeps `digitise --help` light (socket and its modules)
        import socket

        say(f"listening on every address of this machine: from another one, open "
            f"http://{socket.gethostname()}:{server.server_address[1]}/")
    for message in server.session.messages if server.session is not None else ():
        say(f"note: {message}")
    if not no_browser:
        # imported here: keeps `digitise --help` light (webbrowser, ~5 ms)
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    finally:
        server.server_close()


@cli.command(short_help="Retrain the handwriting models (needs PyTorch).")
@click.option("-o", "--output", required=True, type=PATH,
              help="Folder for glyphs.onnx and glyphs.json (the shipped ones: digitise/vision/models/).")
@click.option("--glyphs", type=PATH,
              help="digits.png sheet or folder of labelled digits (default: ../shared/data/digits.png); TRAIN part only.")
@click.option("--synth", type=PATH,
              help="Extra labelled glyph images, <class>/<name>.png (e.g. corrected cells saved by review --learn).")
@click.option("--epochs", type=click.IntRange(1),
              help="Training epochs (default: 10; with --cellnet the point model's, 14 as shipped).")
@click.option("--cells", type=click.IntRange(100), default=14000, show_default=True, help="Synthetic cells to draw.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Seed of every random choice.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=2, show_default=True, help="Processes drawing cells.")
@click.option("--cellnet", is_flag=True,
              help="Train the whole-cell models instead (cellnet_point/centre.onnx): renders and reads synthetic pages.")
@click.option("--matches", type=click.IntRange(1), default=140, show_default=True,
              help="--cellnet: whole matches rendered for training.")
@click.option("--centre-matches", type=click.IntRange(1), default=500, show_default=True,
              help="--cellnet: matches of which only the boards with a written centre are rendered.")
@click.option("--multi-matches", type=click.IntRange(0), default=0, show_default=True,
              help="--cellnet: matches of which only the boards with a square of two or more digits are rendered "
                   "(point model; none as shipped).")
@click.option("--centre-epochs", type=click.IntRange(1), default=36, show_default=True,
              help="--cellnet: epochs of the centre model (--epochs is the point model's).")
@click.option("--only", type=click.Choice(["point", "centre"]), help="--cellnet: train this model only.")
@click.option("--cache", type=PATH,
              help="--cellnet: keep the generated cells here and reuse them.")
@click.option("--augment", is_flag=True,
              help="--cellnet: distort training cells (scale, slant, ink level, stroke width); off as shipped.")
@click.option("--elastic", type=click.FloatRange(0.0, 8.0), default=0.0, show_default=True,
              help="--cellnet: bend training cells' strokes by a smooth random field of about this many pixels.")
@click.option("--second", is_flag=True,
              help="--cellnet: write the models as the second of their kind (cellnet_point_b.onnx...), "
                   "averaged with the first by the reader.")
@click.option("--font-hand", is_flag=True,
              help="--cellnet: write the training pages with digits drawn from fonts too, a hand unlike MNIST's "
                   "(tried as a second point model; see benchmarks/README.md).")
@click.option("--mnist", type=PATH,
              help="Folder of MNIST's idx files (scripts/fetch-mnist): its digits unlike any of --glyphs' "
                   "are trained on too.")
@click.option("--hands", multiple=True,
              help="--cellnet: a hand source (.npz of x and y, as in ../shared/data/hands; files read as one joined "
                   "by commas) whose digits are written into the training pages too; give it once a source.")
@click.option("--force", is_flag=True, help="Replace an existing model.")
@reports_errors
def train(output: Path, glyphs: Path | None, synth: Path | None, epochs: int | None, cells: int, seed: int, jobs: int,
          cellnet: bool, matches: int, centre_matches: int, multi_matches: int, centre_epochs: int, only: str | None,
          cache: Path | None, augment: bool, elastic: float, second: bool, font_hand: bool, mnist: Path | None,
          hands: tuple[str, ...], force: bool) -> None:
    """Train the handwriting classifier (needs the `train` extra: PyTorch) and export it to ONNX."""
    if cellnet:
        # imported here: an optional package (PyTorch, the `train` extra)
        from digitise.training.cellnet import POINT_EPOCHS, CellNetOptions, train_cellnets

        net_report = train_cellnets(CellNetOptions(output=output, glyphs=glyphs, matches=matches,
                                                   centre_matches=centre_matches, multi_matches=multi_matches,
                                                   epochs=epochs or POINT_EPOCHS,
                                                   centre_epochs=centre_epochs, seed=seed, jobs=jobs, cache=cache,
                                                   kinds=(only,) if only else ("point", "centre"),
                                                   augment=augment, elastic=elastic, second=second,
                                                   font_hand=font_hand, mnist=mnist, overwrite=force,
                                                   hands=tuple(tuple(Path(p) for p in h.split(",")) for h in hands)),
                                    progress=say)
        for kind, figures in net_report.figures.items():
            val = figures["validation"]
            click.echo(f"{kind}: validation cells top-1 {val['top1']:.2%}, top-3 {val['top3']:.2%}, "
                       f"ECE {val['ece_top1']:.3f}")
        click.echo(one_line("wrote " + ", ".join(str(p) for p in net_report.models)))
        return
    # imported here: an optional package (PyTorch, the `train` extra)
    from digitise.training.train import GLYPH_EPOCHS, TrainOptions, train_classifier

    report = train_classifier(TrainOptions(output=output, glyphs=glyphs, synth=synth, epochs=epochs or GLYPH_EPOCHS,
                                           seed=seed,
                                           cells=cells, jobs=jobs, mnist=mnist, overwrite=force))
    test = report.figures["test_clean_glyphs"]
    click.echo(one_line(f"wrote {report.model} and {report.metadata}"))
    click.echo(f"held-out TEST glyphs: digits 1-6 {test['digits_1_6']['accuracy']:.2%}, "
               f"0-9 {test['digits_0_9']['accuracy']:.2%}, ECE {test['digits_0_9']['ece']:.3f}")


@cli.command(short_help="Render synthetic filled notes from a .mat.")
@click.argument("match_file", metavar="MATCH.mat", type=PATH)
@click.option("-o", "--output", "output_dir", required=True, type=PATH,
              help="Folder for page-001.png, page-001.truth.json, ... and match.mat.")
@click.option("--paper", default="a4", show_default=True, help="Paper: a4 or letter, or a geometry JSON.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed: the same seed gives the same files.")
@click.option("--degrade", type=click.Choice(["none", "light", "medium", "heavy", "photocopy"]), default="light",
              show_default=True, help="Scan damage level (see digitise/sheet/damage.py).")
@click.option("--glyphs", type=PATH,
              help="digits.png or a folder of labelled digit images (default: ../shared/data/digits.png).")
@click.option("--format", "fmt", type=click.Choice(["png", "jpg", "pdf"]), default="png", show_default=True,
              help="Page images, or one multi-page PDF (pages.pdf) as a scanner makes.")
@click.option("--dpi", type=click.IntRange(50, 600), help="Resolution (default: drawn from the damage level).")
@click.option("--names", "names_boards", is_flag=True, help="Open every game with a board of the players' names.")
@click.option("--force", is_flag=True, help="Replace an existing output folder.")
@reports_errors
def synth(match_file: Path, output_dir: Path, paper: str, seed: int, degrade: str, glyphs: Path | None, fmt: str,
          dpi: int | None, names_boards: bool, force: bool) -> None:
    """Render MATCH.mat as handwritten, scan-damaged note pages with truth files."""
    # imported here: keeps `digitise --help` light (OpenCV, NumPy)
    from digitise.sheet.synth import write_synth

    written = write_synth(match_file, output_dir, paper=paper, seed=seed, degrade=degrade, glyphs=glyphs,
                          fmt=fmt, overwrite=force, dpi=dpi, names_boards=names_boards)
    pages = sum(1 for p in written if p.name.endswith(".truth.json"))
    say(f"{output_dir}: {pages} pages ({degrade}, seed {seed})")
