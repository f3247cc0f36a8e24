"""Session keys read by more than one ui module (kept values live under 'keep_<key>'). Here, not in
state.py, because render.py reads them and state.py draws with render.py."""

TABLE_KEY = "keep_table"            # the working table's name
PRESENT_KEY = "keep_present"        # presentation mode on
IMAGE_FORMAT_KEY = "keep_image_format"   # figure downloads: "png" or "svg"
TOUR_APPLIED = "_tour_applied"      # the (tour, step) whose view was last put in place (ui.lessons.tours)
# the sidebar's expanders (state.sidebar_section): whether each is open, kept under keep_<key>
TOURS_SECTION = "sidebar_tours"
LOADERS_SECTION = "sidebar_loaders"
DISPLAY_SECTION = "sidebar_display"
ABOUT_SECTION = "sidebar_about"
CLASS_LINK_SECTION = "sidebar_class_link"
