"""The kit every page is made with: the Jinja2 environment and Markdown, the site's paths and links, escaping, highlighting, the answers' phrase diff."""
