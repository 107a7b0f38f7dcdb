//! Key routing: a filter being typed takes every key; help and detail close on Esc; the rest are
//! the keys of issue 3 (1–6, Tab, arrows/j/k, Enter, s, /, f, m, t, ?, q, Ctrl-C).

use super::travel::Overlay;
use super::{Action, App, ReplayAction, SortBy, Tab};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

const PAGE: usize = 10;

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
    if app.help {
        // Any key closes help; q still quits.
        app.help = false;
        if k.code != KeyCode::Char('q') {
            return;
        }
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
        KeyCode::Char(c @ '1'..='6') => {
            let i = c as usize - '1' as usize;
            app.tab = Tab::ALL[i];
            app.detail = false;
        }
        KeyCode::Tab => {
            app.tab = app.tab.step(1);
            app.detail = false;
        }
        KeyCode::BackTab => {
            app.tab = app.tab.step(-1);
            app.detail = false;
        }
        KeyCode::Down | KeyCode::Char('j') => move_sel(app, 1),
        KeyCode::Up | KeyCode::Char('k') => move_sel(app, -1),
        KeyCode::PageDown => move_sel(app, PAGE as isize),
        KeyCode::PageUp => move_sel(app, -(PAGE as isize)),
        KeyCode::Home | KeyCode::Char('g') => {
            if app.tab == Tab::Log {
                app.log.scroll = app.log.lines.len();
            } else {
                app.selected[tab] = 0;
            }
        }
        KeyCode::End | KeyCode::Char('G') => {
            if app.tab == Tab::Log {
                app.log.scroll = 0;
            } else {
                app.selected[tab] = app.rows[tab].get().saturating_sub(1);
            }
        }
        KeyCode::Enter => app.detail = !app.detail,
        KeyCode::Esc => {
            if app.detail {
                app.detail = false;
            } else {
                app.filter.clear();
            }
        }
        KeyCode::Char('s') => {
            app.sort = match app.sort {
                SortBy::Worst => SortBy::Name,
                SortBy::Name => SortBy::Worst,
            }
        }
        KeyCode::Char('/') => {
            app.filter_editing = true;
            app.filter.clear();
        }
        KeyCode::Char('f') => app.toggle_freeze(),
        KeyCode::Char('r') if app.replay.is_none() => app.actions.push(Action::ToggleRecord),
        KeyCode::Char('S') => app.actions.push(Action::Bundle),
        KeyCode::Char(' ') if app.replay.is_some() => {
            app.actions.push(Action::Replay(ReplayAction::TogglePause))
        }
        KeyCode::Char('.') if app.replay.is_some() => {
            app.actions.push(Action::Replay(ReplayAction::Step))
        }
        KeyCode::Char(c @ ('[' | ']' | '{' | '}')) => {
            let ms = match c {
                '[' => -10_000,
                ']' => 10_000,
                '{' => -60_000,
                _ => 60_000,
            };
            if app.replay.is_some() {
                app.actions.push(Action::Replay(ReplayAction::SeekBy(ms)))
            } else {
                app.seek_by(ms)
            }
        }
        KeyCode::Char('e') => open_overlay(app, Overlay::Episodes),
        KeyCode::Char('A') => open_overlay(app, Overlay::Alerts),
        KeyCode::Char(c @ ('-' | '+' | '=')) if app.replay.is_some() => {
            let x = if c == '-' { 0.5 } else { 2.0 };
            app.actions.push(Action::Replay(ReplayAction::Speed(x)))
        }
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
        Overlay::Alerts => app.alerts.rolled(app.episodes.open.as_ref(), &app.cfg),
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
            }
        }
        KeyCode::Char('x') if o == Overlay::Alerts => {
            if let Some(l) = lines.get(sel) {
                app.alerts.toggle_mute(l);
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

fn move_sel(app: &mut App, by: isize) {
    if app.tab == Tab::Log {
        // Up scrolls back in the log, down towards its end.
        let s = app.log.scroll as isize - by;
        app.log.scroll = s.clamp(0, app.log.lines.len() as isize) as usize;
        return;
    }
    let i = app.tab.index();
    // Row counts come from the last draw; before any draw, moving down is not bounded.
    let rows = app.rows[i].get();
    let max = if rows == 0 {
        isize::MAX
    } else {
        rows as isize - 1
    };
    let cur = (app.selected[i] as isize).min(max);
    app.selected[i] = (cur + by).clamp(0, max) as usize;
}
