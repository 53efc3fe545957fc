"""The interactive graph view (ChatCLI's ``@graphview``): one offline HTML page.

:mod:`.data` turns the graph (built after the secrets boundary) and the vault's paths into the
page's data (pure); :mod:`.page` puts that data, the vendored sigma.js and graphology (in
``vendor/``, with their licenses) and the page's own script into one self-contained HTML file.
"""
