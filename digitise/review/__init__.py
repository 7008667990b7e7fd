"""The review step: a local web page to fix flagged turns and export the corrected ``.mat``.

:mod:`~digitise.review.server` serves it (standard library ``http.server``),
:mod:`~digitise.review.session` holds one report under review,
:mod:`~digitise.review.folder` a folder of them (a batch's output),
:mod:`~digitise.review.corrections` reads and writes the corrections file,
:mod:`~digitise.review.apply` solves with corrections (also for
``digitise scan --corrections``), :mod:`~digitise.review.board_svg` draws positions.
"""
