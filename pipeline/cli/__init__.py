"""The shell: click commands that call the stages and print what they return.

:mod:`.main` is the ``vaultsync`` group (sync, status, check, graph, link commands); the
``query`` (:mod:`.knowledge`) and ``search``/``registry``/``serve`` (:mod:`.search`) groups load
only when used.  Only this package prints errors: a ``VaultsyncError`` becomes one
``error: …`` line on stderr and the exit code of its class.
"""
