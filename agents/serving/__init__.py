"""Serving kibitz's agents: the HTTP service (``kibitz serve``: ``POST
/act`` and friends, :mod:`.serve`, :mod:`.web_app`, :mod:`.openapi`) and the
web table where people play the agents (:mod:`.table`, its records in
SQLite :mod:`.table_records`, what each seat may see :mod:`.table_views`,
the page in ``web/``)."""
