"""Errors as the report shows them: one line, bounded, so a failing executor's reason fits
in a table footnote and the log."""


def one_line(ex):
    text = " ".join(str(ex).split())
    return f"{type(ex).__name__}: {text[:300]}{'...' if len(text) > 300 else ''}"
