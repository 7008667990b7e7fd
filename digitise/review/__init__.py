"""The review step: a local web page to fix flagged turns and export the corrected ``.mat``.

:mod:`~digitise.review.server` serves it (standard library ``http.server``),
:mod:`~digitise.review.session` holds one report under review,
:mod:`~digitise.review.folder` a folder of them (a batch's output),
:mod:`~digitise.review.board_svg` draws positions. The corrections file and
solving with it live below, in :mod:`~digitise.solve.corrections` and
:mod:`~digitise.solve.reviewed`: ``digitise scan --corrections`` uses them too.
"""
