"""Untrusted text as the content of an HTML element: `&`, `<` and `>` escaped, which is all that can start markup
there. Quotes are left as they are: they only matter inside an attribute's value, where this text never goes
(attributes are escaped whole by markupsafe). JSON and answers are full of quotes, five or six bytes each as
entities, and three `str.replace` calls cost less than markupsafe's escape and the Markup it makes.
"""

from __future__ import annotations


def element_escaped(text: str) -> str:
    """`text` safe as an element's content (never an attribute's)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
