"""`reducebench report`: one self-contained HTML page per run, sweep or comparison
(docs/report.md). Plotly and Jinja2 are an optional extra: pip install 'reducebench[report]'."""
