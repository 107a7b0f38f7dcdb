//! A device's context, protection domain and async events, opened once per process and shared
//! by every endpoint on that device.

use super::*;

/// An async event as every session of the device sees it: its number, and what it is about (the
/// QP or CQ pointer, or the port, as the union holds them).
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    pub(super) seq: u64,
    pub(super) ty: u32,
    pub(super) element: usize,
    pub(super) port: i32,
}

/// Events read from the device's one async descriptor, kept a while so that every session sharing
/// the device sees each: one session reading the descriptor must not hide a GID change from the
/// others.
#[derive(Debug, Default)]
struct Events {
    next: u64,
    recent: VecDeque<Event>,
}

/// Events kept for sessions that have not looked yet (a session looks before every probe).
const EVENTS_KEPT: usize = 64;

/// A device's context and protection domain, shared by every endpoint on that device: a pingd
/// serving many pingers opens each device once, not once per session (each open is a few ms of
/// kernel work and a uverbs file). Closed when the last endpoint on it is dropped.
pub(super) struct Shared {
    pub(super) name: String,
    pub(super) ctx: *mut ibv_context,
    pub(super) pd: *mut ibv_pd,
    events: Mutex<Events>,
}

// SAFETY: libibverbs' context and PD may be used from any thread (its verbs are thread-safe); the
// only state of ours, the event list, is behind a mutex.
unsafe impl Send for Shared {}
// SAFETY: as for Send: shared references only call thread-safe verbs or lock the mutex.
unsafe impl Sync for Shared {}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the last endpoint on the device is gone (this runs when the last Arc drops), so
        // no QP, CQ or MR of the PD or context is alive; the PD goes before its context.
        unsafe {
            if !self.pd.is_null() {
                ibv_dealloc_pd(self.pd);
            }
            if !self.ctx.is_null() {
                ibv_close_device(self.ctx);
            }
        }
    }
}

/// The devices open in this process, by name.
static OPEN: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

pub(super) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// The open device `name`, opening it (and allocating its PD) if no endpoint holds it now.
    pub(super) fn get(name: &str) -> Result<Arc<Shared>, String> {
        // Held across the open, so two sessions starting together open the device once.
        let mut open = locked(&OPEN);
        open.retain(|w| w.strong_count() > 0);
        if let Some(d) = open
            .iter()
            .filter_map(Weak::upgrade)
            .find(|d| d.name == name)
        {
            return Ok(d);
        }
        let mut d = Shared {
            name: name.to_string(),
            ctx: open_device(name)?,
            pd: ptr::null_mut(),
            events: Mutex::new(Events::default()),
        };
        // SAFETY: ctx is live; the PD is owned by `d` and freed in its Drop (also on error here).
        d.pd = unsafe { ibv_alloc_pd(d.ctx) };
        if d.pd.is_null() {
            return Err(os_err("ibv_alloc_pd"));
        }
        let d = Arc::new(d);
        open.push(Arc::downgrade(&d));
        Ok(d)
    }

    /// The events after `seen`, having read whatever the device's descriptor holds now.
    pub(super) fn events_after(&self, seen: u64) -> Vec<Event> {
        let mut ev = locked(&self.events);
        while let Some((ty, element, port)) = self.read_event() {
            let seq = ev.next;
            ev.next += 1;
            ev.recent.push_back(Event {
                seq,
                ty,
                element,
                port,
            });
            if ev.recent.len() > EVENTS_KEPT {
                ev.recent.pop_front();
            }
        }
        ev.recent
            .iter()
            .filter(|e| e.seq >= seen)
            .copied()
            .collect()
    }

    /// The sequence number the next event will get (a new endpoint has seen all before it).
    pub(super) fn next_event(&self) -> u64 {
        locked(&self.events).next
    }

    /// One event from the async descriptor, without waiting: its type, element and port.
    pub(super) fn read_event(&self) -> Option<(u32, usize, i32)> {
        // SAFETY: ctx is live; its async_fd is the device's event descriptor, polled without waiting.
        let mut pfd = libc::pollfd {
            fd: unsafe { (*self.ctx).async_fd },
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        if unsafe { libc::poll(&mut pfd, 1, 0) } <= 0 {
            return None;
        }
        // SAFETY: plain data (a union of pointers and an int, and an int); zero is valid and is
        // overwritten on success.
        let mut ev: RawAsyncEvent = unsafe { std::mem::zeroed() };
        let raw = (&mut ev as *mut RawAsyncEvent).cast::<ibv_async_event>();
        // SAFETY: ctx is live; an event is ready, so the call does not block; `raw` points to a
        // struct of ibv_async_event's layout (checked by a test) whose event type is read as an
        // integer only, its element as the pointer and the int the union holds; every event got
        // is acknowledged once (destroying the QP/CQ waits for it). The events lock is held, so
        // one thread at a time reads the descriptor.
        unsafe {
            if ibv_get_async_event(self.ctx, raw) != 0 {
                return None;
            }
            let (element, port) = (ev.element.qp as usize, ev.element.port_num);
            ibv_ack_async_event(raw);
            Some((ev.event_type, element, port))
        }
    }
}

fn open_device(name: &str) -> Result<*mut ibv_context, String> {
    let mut n: i32 = 0;
    // SAFETY: valid out-pointer; the list is freed after the device is opened, as verbs require.
    unsafe {
        let list = ibv_get_device_list(&mut n);
        if list.is_null() {
            return Err(UNAVAILABLE.to_string());
        }
        let mut ctx = ptr::null_mut();
        for i in 0..n.max(0) as usize {
            let dev = *list.add(i);
            if CStr::from_ptr(ibv_get_device_name(dev)).to_string_lossy() == name {
                ctx = ibv_open_device(dev);
                break;
            }
        }
        ibv_free_device_list(list);
        if ctx.is_null() {
            return Err(os_err(&format!("cannot open {name}")));
        }
        Ok(ctx)
    }
}
