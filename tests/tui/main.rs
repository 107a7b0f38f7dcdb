//! The screen: `App::update` fed with events and polls (tests/support/feed.rs), frames drawn on a
//! TestBackend and compared with insta snapshots (tests/tui/snapshots/), and the real binary under
//! tmux.

#[path = "../support/feed.rs"]
mod feed;
#[path = "../common/skip.rs"]
mod skip;

mod episodes_app;
mod episodes_sim;
mod fabric_sim;
mod topology_app;
mod tui_app;
mod tui_render;
mod tui_tmux;
