//! Key and mouse routing: a filter being typed takes every key; an open overlay (help, the detail
//! chart) is closed by the next key, which then does nothing else; the rest are the tab keys.
//! Moving the selection acts on the rows as last drawn and remembers the item, not the position.

use super::travel::Overlay;
use super::{Action, App, ReplayAction, Selection, Tab};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

const PAGE: isize = 10;
/// Rows per wheel notch.
const WHEEL: isize = 3;

pub(super) fn handle(app: &mut App, k: KeyEvent) {
    if k.kind == KeyEventKind::Release {
        return;
    }
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('C')) {
        app.quit = true;
        return;
    }
    if app.filter_editing {
        match k.code {
            KeyCode::Enter => app.filter_editing = false,
            KeyCode::Esc => {
                app.filter_editing = false;
                app.filter.clear();
            }
            KeyCode::Backspace => {
                app.filter.pop();
            }
            KeyCode::Char(c) if !ctrl => app.filter.push(c),
            _ => {}
        }
        return;
    }
    if close_overlay(app) {
        return;
    }
    if app.overlay.is_some() && overlay_key(app, k.code) {
        return;
    }
    if app.travel.is_some() && matches!(k.code, KeyCode::Home | KeyCode::End | KeyCode::Esc) {
        app.back_to_live();
        return;
    }
    let tab = app.tab.index();
    match k.code {
        KeyCode::Char('q') => app.quit = true,
        KeyCode::Char(c @ '1'..='6') => app.tab = Tab::ALL[c as usize - '1' as usize],
        KeyCode::Tab => app.tab = app.tab.step(1),
        KeyCode::BackTab => app.tab = app.tab.step(-1),
        KeyCode::Down | KeyCode::Char('j') => move_sel(app, 1),
        KeyCode::Up | KeyCode::Char('k') => move_sel(app, -1),
        KeyCode::PageDown => move_sel(app, PAGE),
        KeyCode::PageUp => move_sel(app, -PAGE),
        KeyCode::Home | KeyCode::Char('g') => {
            if app.tab == Tab::Log {
                app.log.scroll = app.log.lines.len();
            } else {
                move_sel(app, isize::MIN / 2);
            }
        }
        KeyCode::End | KeyCode::Char('G') => {
            if app.tab == Tab::Log {
                app.log.scroll = 0;
            } else {
                move_sel(app, isize::MAX / 2);
            }
        }
        KeyCode::Left | KeyCode::Char('h') => app.hscroll[tab] = app.hscroll[tab].saturating_sub(1),
        // Bounded when drawn (ui/grid.rs clamps to the hidden columns).
        KeyCode::Right | KeyCode::Char('l') => app.hscroll[tab] = (app.hscroll[tab] + 1).min(32),
        KeyCode::Enter => {
            // The chart is of the item selected now: pin it, so new data cannot swap it.
            move_sel(app, 0);
            // A fleet node SSH can reach: its focus (app/focus.rs); else the charts.
            app.enter();
        }
        KeyCode::Esc => app.filter.clear(),
        KeyCode::Char('s') => app.sorts[tab].flipped = !app.sorts[tab].flipped,
        KeyCode::Char(c @ ('<' | '>')) => pick_sort(app, if c == '<' { -1 } else { 1 }),
        KeyCode::Char('/') => {
            app.filter_editing = true;
            app.filter.clear();
        }
        KeyCode::Char('f') => app.toggle_freeze(),
        KeyCode::Char('r') if app.replay.is_none() => app.actions.push(Action::ToggleRecord),
        KeyCode::Char('S') => app.actions.push(Action::Bundle),
        KeyCode::Char('p') if app.tab == Tab::Pfc => {
            app.show_tree = !app.show_tree;
            app.tree_of = None;
        }
        KeyCode::Char(c) if app.replay.is_some() && replay_key(app, c) => {}
        // Live, the replay's seek keys travel back through the in-memory history.
        KeyCode::Char(c @ ('[' | ']' | '{' | '}')) => {
            let ms = match c {
                '[' => -10_000,
                ']' => 10_000,
                '{' => -60_000,
                _ => 60_000,
            };
            app.seek_by(ms)
        }
        KeyCode::Char('e') => open_overlay(app, Overlay::Episodes),
        KeyCode::Char('A') => open_overlay(app, Overlay::Alerts),
        KeyCode::Char('m') => app.mark = Some(app.view_now()),
        KeyCode::Char('M') => app.mark = None,
        KeyCode::Char('t') => app.theme = app.theme.next(app.no_color),
        KeyCode::Char('?') | KeyCode::F(1) => app.help = true,
        _ => {}
    }
}

fn open_overlay(app: &mut App, o: Overlay) {
    app.overlay = Some(o);
    app.overlay_sel = 0;
}

/// Keys of an open overlay; returns whether the key was its own.
fn overlay_key(app: &mut App, code: KeyCode) -> bool {
    let Some(o) = app.overlay else {
        return false;
    };
    let lines = match o {
        Overlay::Alerts => app.alerts().rolled(app.episode_open_in_view(), &app.links),
        Overlay::Episodes => Vec::new(),
    };
    let n = match o {
        Overlay::Alerts => lines.len(),
        Overlay::Episodes => app.episodes.all().len(),
    };
    let sel = app.overlay_sel.min(n.saturating_sub(1));
    match code {
        KeyCode::Esc => app.overlay = None,
        KeyCode::Char('e') if o == Overlay::Episodes => app.overlay = None,
        KeyCode::Char('A') if o == Overlay::Alerts => app.overlay = None,
        KeyCode::Down | KeyCode::Char('j') => app.overlay_sel = (sel + 1).min(n.saturating_sub(1)),
        KeyCode::Up | KeyCode::Char('k') => app.overlay_sel = sel.saturating_sub(1),
        KeyCode::Home | KeyCode::Char('g') => app.overlay_sel = 0,
        KeyCode::End | KeyCode::Char('G') => app.overlay_sel = n.saturating_sub(1),
        KeyCode::Char('a') if o == Overlay::Alerts => {
            if let Some(l) = lines.get(sel) {
                app.alerts.toggle_ack(l);
                if let Some(past) = &mut app.past_alerts {
                    past.toggle_ack(l);
                }
            }
        }
        KeyCode::Char('x') if o == Overlay::Alerts => {
            if let Some(l) = lines.get(sel) {
                app.alerts.toggle_mute(l);
                if let Some(past) = &mut app.past_alerts {
                    past.toggle_mute(l);
                }
            }
        }
        // The episode's pause tree at its PFC peak, on the PFC tab.
        KeyCode::Char('p') if o == Overlay::Episodes => {
            if let Some(id) = app.episodes.all().get(sel).map(|e| e.id) {
                app.overlay = None;
                app.tab = Tab::Pfc;
                app.show_tree = true;
                app.tree_of = Some(id);
            }
        }
        KeyCode::Enter => match o {
            Overlay::Alerts => {
                if let Some(l) = lines.get(sel) {
                    app.jump_to(l.tab, l.row.clone());
                }
            }
            Overlay::Episodes => {
                // Travel to the episode's start, so every tab shows how it began.
                if let Some(start) = app.episodes.all().get(sel).map(|e| e.start) {
                    app.overlay = None;
                    if start < app.now {
                        app.seek_to(start.max(app.history_start()));
                    }
                }
            }
        },
        KeyCode::Char('q') => return false,
        _ => {}
    }
    true
}

/// Close the open overlay, if any: the key (or click) that does so does nothing else.
fn close_overlay(app: &mut App) -> bool {
    if app.help || app.detail {
        app.help = false;
        app.detail = false;
        return true;
    }
    false
}

/// The replay controls (`rocetop replay`); false for any other key.
fn replay_key(app: &mut App, c: char) -> bool {
    let a = match c {
        ' ' => ReplayAction::TogglePause,
        '.' => ReplayAction::Step,
        '[' => ReplayAction::SeekBy(-10_000),
        ']' => ReplayAction::SeekBy(10_000),
        '{' => ReplayAction::SeekBy(-60_000),
        '}' => ReplayAction::SeekBy(60_000),
        '-' => ReplayAction::Speed(0.5),
        '+' | '=' => ReplayAction::Speed(2.0),
        _ => return false,
    };
    app.actions.push(Action::Replay(a));
    true
}

/// `<`/`>`: sort by the previous/next column; before the first column is "worst first".
fn pick_sort(app: &mut App, by: isize) {
    let i = app.tab.index();
    let cols = app.shown(app.tab).cols.len() as isize;
    if cols == 0 {
        return;
    }
    // Positions: -1 = worst first, 0.. = columns.
    let cur = app.sorts[i].col.map_or(-1, |c| c as isize);
    let next = (cur + by).clamp(-1, cols - 1);
    app.sorts[i].col = (next >= 0).then_some(next as usize);
    app.sorts[i].flipped = false;
}

/// Move the current tab's selection by `by` rows of what was last drawn (0 pins the item there).
fn move_sel(app: &mut App, by: isize) {
    if app.tab == Tab::Log {
        // Up scrolls back in the log, down towards its end.
        let s = app.log.scroll as isize - by;
        app.log.scroll = s.clamp(0, app.log.lines.len() as isize) as usize;
        return;
    }
    let tab = app.tab;
    let view = app.shown(tab);
    let Some(cur) = app.selected_in(tab, &view) else {
        return;
    };
    let to = (cur as isize)
        .saturating_add(by)
        .clamp(0, view.len() as isize - 1) as usize;
    app.selected[tab.index()] = Selection {
        id: view.get(to).map(|r| r.id.clone()),
        index: to,
    };
}

/// Clicks select tabs and rows; the wheel moves the selection (Log: scrolls). Returns whether the
/// screen changed.
pub(super) fn mouse(app: &mut App, m: MouseEvent) -> bool {
    match m.kind {
        MouseEventKind::ScrollDown => move_sel(app, WHEEL),
        MouseEventKind::ScrollUp => move_sel(app, -WHEEL),
        MouseEventKind::Down(MouseButton::Left) => {
            if close_overlay(app) {
                return true;
            }
            click(app, m.column, m.row);
        }
        _ => return false,
    }
    true
}

fn click(app: &mut App, x: u16, y: u16) {
    let hits = app.hits.borrow().clone();
    if y == hits.tab_bar_y {
        if let Some(t) = hits.tabs.iter().find(|t| t.x.contains(&x)) {
            app.tab = t.tab;
        }
        return;
    }
    let Some(t) = hits.table else {
        return;
    };
    if y < t.y || y >= t.y + t.rows || !t.x.contains(&x) {
        return;
    }
    let tab = app.tab;
    let view = app.shown(tab);
    let i = t.first + (y - t.y) as usize;
    if let Some(r) = view.get(i) {
        app.selected[tab.index()] = Selection {
            id: Some(r.id.clone()),
            index: i,
        };
    }
}
