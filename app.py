"""Embedding Lens: the frame. Page config, navigation and sidebar (ui.shell), the chosen page,
then the URL brought up to date with every value the run used."""
from ui import shell, state
from ui.server import downloads
from ui.server import guard as server_guard
from ui.server import warm
from ui.server import widget_state

server_guard.install()        # once per process: a client's clear_cache message is refused (ui/server/guard.py)
widget_state.install()        # once per process: a widget asks Session State about its own key only
downloads.install()           # once per process: a clicked download's file stays until its session's next run
state.start_query_registry()
page = shell.shell()          # st.set_page_config, st.navigation(shell.pages()), the sidebar
state.on_page(page.url_path)
warm.show_warm_up()           # the first run starts the server's warm-up; visitors hear what still loads
page.run()
state.show_pending_warnings()
state.sync_query_params()
shell.class_link(page)      # the link for a class: every value this run put in the URL
warm.keep_heap_frozen()     # what the server keeps for good stays out of the collector's way (core/server/heap.py)
