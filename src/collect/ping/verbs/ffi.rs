//! The real endpoint: libibverbs through rdma-sys. Objects are created as rc_pingpong's
//! `pp_init_ctx` does and destroyed in reverse order; every post/modify error carries the return
//! code (verbs return it; errno is not set reliably).

use super::super::gid::{self, Choice, Pin, Roce, Route, Versions};
use super::super::proto::{ConnInfo, PROBE_LEN};
use super::super::{QpType, VerbsOptions};
use super::{Device, Endpoint, UNAVAILABLE, attr};
use rdma_sys::*;
use std::collections::VecDeque;
use std::ffi::CStr;
use std::net::IpAddr;
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

mod shared;
use shared::Shared;

const RECV_SLOTS: usize = 16;
const SLOT: usize = 64;
const SEND_WR_ID: u64 = u64::MAX;
/// What a UD receive holds before the payload: the packet's GRH (40 bytes, also on RoCE).
const GRH_LEN: usize = 40;
const _: () = assert!(GRH_LEN + PROBE_LEN <= SLOT, "a UD receive fits its slot");

/// The registered memory: receive slots the NIC writes while the program runs, then the send slot.
/// Held as a raw pointer, never as a Rust slice: a `&mut [u8]` over bytes the NIC may be writing
/// would promise the compiler that nobody else touches them. Every access copies through the
/// pointer, inside the bounds checked here.
struct Buf {
    ptr: *mut u8,
    len: usize,
}

impl Buf {
    const ALIGN: usize = 64;

    fn new(len: usize) -> Result<Self, String> {
        let layout = std::alloc::Layout::from_size_align(len.max(1), Self::ALIGN)
            .map_err(|e| e.to_string())?;
        // SAFETY: the layout has a nonzero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err("cannot allocate the probe buffer".into());
        }
        Ok(Buf { ptr, len })
    }

    /// The address of byte `off`, if `n` bytes from there are inside the buffer.
    fn at(&self, off: usize, n: usize) -> Option<*mut u8> {
        // SAFETY: off + n <= len, so the result points inside (or one past) the allocation.
        (off.checked_add(n)? <= self.len).then(|| unsafe { self.ptr.add(off) })
    }

    fn write(&self, off: usize, data: &[u8]) -> bool {
        let Some(p) = self.at(off, data.len()) else {
            return false;
        };
        // SAFETY: `p..p+len` is inside the allocation (checked by `at`) and does not overlap `data`,
        // a Rust value; the NIC reads the send slot only during a post, which copies inline data.
        unsafe { ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        true
    }

    fn read(&self, off: usize) -> Option<[u8; PROBE_LEN]> {
        let p = self.at(off, PROBE_LEN)?;
        let mut out = [0u8; PROBE_LEN];
        // SAFETY: inside the allocation (checked by `at`); the receive completion of this slot was
        // polled, so the NIC has finished writing it and will not again until it is reposted.
        unsafe { ptr::copy_nonoverlapping(p, out.as_mut_ptr(), PROBE_LEN) };
        Some(out)
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(self.len.max(1), Self::ALIGN) {
            // SAFETY: allocated in `new` with this layout, freed once; the MR over it was
            // deregistered first (`Rc::drop` runs before its fields drop).
            unsafe { std::alloc::dealloc(self.ptr, layout) };
        }
    }
}

/// Whether a receive completion holds a whole probe: the peer's sends are PROBE_LEN bytes (after
/// the `grh` bytes a UD receive starts with), and a shorter one leaves the rest of the slot as the
/// previous probe wrote it.
fn holds_a_probe(byte_len: u32, grh: usize) -> bool {
    byte_len as usize == grh + PROBE_LEN
}

/// `ibv_async_event` as libibverbs writes it, with the event type as the integer it is. rdma-sys
/// declares the type a Rust enum: a value it does not list (an event a newer kernel adds) would be
/// undefined behaviour the moment it is read.
#[repr(C)]
struct RawAsyncEvent {
    element: ibv_async_event_element_t,
    event_type: u32,
}

/// What an async event means for a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventKind {
    /// The device is broken: every session on it.
    Fatal,
    /// A CQ is broken: the session whose CQ it is.
    CqFatal,
    /// A QP is broken: the session whose QP it is.
    QpFatal,
    /// A port went down or its GID table changed: matters when it is our port.
    Port,
    GidChange,
    Ignore,
}

/// The event's meaning and name (libibverbs' `ibv_event_type_str` words), for any integer.
fn event_kind(ty: u32) -> (EventKind, String) {
    use EventKind::*;
    let (kind, name) = match ty {
        0 => (CqFatal, "CQ error"),
        1 => (QpFatal, "local work queue catastrophic error"),
        2 => (QpFatal, "invalid request local work queue error"),
        3 => (QpFatal, "local access violation work queue error"),
        4 => (Ignore, "communication established"),
        5 => (Ignore, "send queue drained"),
        6 => (Ignore, "path migrated"),
        7 => (Ignore, "path migration request error"),
        8 => (Fatal, "local catastrophic error"),
        9 => (Ignore, "port active"),
        10 => (Port, "port error"),
        11 => (Ignore, "LID change"),
        12 => (Ignore, "P_Key change"),
        13 => (Ignore, "SM change"),
        14 => (Ignore, "SRQ catastrophic error"),
        15 => (Ignore, "SRQ limit reached"),
        16 => (Ignore, "last WQE reached"),
        17 => (Ignore, "client reregistration"),
        18 => (GidChange, "GID table change"),
        19 => (Ignore, "WQ fatal"),
        n => return (Ignore, format!("unknown event {n}")),
    };
    (kind, name.to_string())
}

/// Names of the RDMA devices of this host, or why there are none. With no RDMA in the kernel
/// `ibv_get_device_list` returns NULL (ENOSYS), not an empty list.
pub fn devices() -> Result<Vec<String>, String> {
    let mut n: i32 = 0;
    // SAFETY: `n` is a valid out-pointer; the list is freed below and never used after.
    let list = unsafe { ibv_get_device_list(&mut n) };
    if list.is_null() {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(38) | Some(2) | Some(0) | None => UNAVAILABLE.to_string(), // ENOSYS, ENOENT
            _ => format!("RDMA unavailable on this host: {e}"),
        });
    }
    let mut names = Vec::new();
    for i in 0..n.max(0) as usize {
        // SAFETY: the list holds `n` valid device pointers; the name is a NUL-terminated string
        // owned by the device, copied before the list is freed.
        let name = unsafe {
            let dev = *list.add(i);
            CStr::from_ptr(ibv_get_device_name(dev))
                .to_string_lossy()
                .into_owned()
        };
        names.push(name);
    }
    // SAFETY: `list` came from ibv_get_device_list and is freed exactly once.
    unsafe { ibv_free_device_list(list) };
    if names.is_empty() {
        return Err(UNAVAILABLE.to_string());
    }
    Ok(names)
}

/// For pingd's start line: the devices, and that each session picks its own from the route.
pub fn describe(opts: &VerbsOptions) -> String {
    match devices() {
        Err(e) => e,
        Ok(names) => {
            let pinned = match (&opts.device, opts.gid_index) {
                (Some(d), Some(g)) => format!("pinned to {d} port {} GID {g}", opts.port),
                (Some(d), None) => format!("pinned to {d} port {}", opts.port),
                _ => "device and GID chosen per session from the route to the pinger".into(),
            };
            format!("devices {}; {pinned}", names.join(", "))
        }
    }
}

/// The local interface addresses (getifaddrs): which netdev holds a source address.
fn interface_addrs() -> Vec<(String, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success the list is walked read-only and freed once.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut p = head;
        while !p.is_null() {
            let ifa = &*p;
            p = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
                continue;
            }
            let name = CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
            let ip = match (*ifa.ifa_addr).sa_family as i32 {
                libc::AF_INET => {
                    let sa = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::from(u32::from_be(sa.sin_addr.s_addr).to_be_bytes())
                }
                libc::AF_INET6 => {
                    let sa = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::from(sa.sin6_addr.s6_addr)
                }
                _ => continue,
            };
            out.push((name, ip));
        }
        libc::freeifaddrs(head);
    }
    out
}

/// The real device: picks device, port and GID from the route (or the pins) at each open.
#[derive(Clone, Debug)]
pub struct Verbs(pub VerbsOptions);

impl Device for Verbs {
    type Ep = Rc;

    fn open(&self, src: IpAddr) -> Result<Rc, String> {
        let o = &self.0;
        Rc::open(
            self.resolve(src)?,
            &o.sysfs_root,
            o.traffic_class,
            o.sl,
            o.qp_type,
        )
    }
}

impl Verbs {
    /// The device, port and GID a session from `src` uses (what the hardware test hands
    /// `ib_send_lat`, so that both time the same path).
    pub fn resolve(&self, src: IpAddr) -> Result<Choice, String> {
        let o = &self.0;
        let route = Route {
            src,
            netdev: gid::netdev_of(src, &interface_addrs()),
        };
        let pin = Pin {
            device: o.device.clone(),
            port: (o.device.is_some()).then_some(o.port),
            gid_index: o.gid_index,
        };
        gid::select(&o.sysfs_root, &route, &pin)
    }
}

/// The verbs objects of one RC endpoint, destroyed in reverse order on drop.
pub struct Rc {
    choice: Choice,
    /// The version sent: the preferred one until both ends agreed in `connect`.
    roce: Roce,
    agreed: bool,
    /// Where the GID table is re-read after a GID change.
    sysfs_root: String,
    local: attr::Local,
    /// Events of the device numbered below this were seen (or came before this endpoint).
    seen: u64,
    qp_type: QpType,
    /// UD: the address handle toward the peer, and its QPN (RC has both in the QP).
    ah: *mut ibv_ah,
    remote_qpn: u32,
    cq: *mut ibv_cq,
    qp: *mut ibv_qp,
    mr: *mut ibv_mr,
    buf: Buf,
    gid: [u8; 16],
    lid: u16,
    /// The device's context and PD: dropped after the QP, CQ and MR (`Drop::drop` runs before the
    /// fields drop), closed with the last endpoint on the device.
    dev: Arc<Shared>,
}

// SAFETY: an Rc is used by one thread at a time (it is moved into its session's thread); the verbs
// objects it owns are not tied to the thread that created them.
unsafe impl Send for Rc {}

impl Drop for Rc {
    fn drop(&mut self) {
        // SAFETY: each pointer is either null or a live object created by `open`, owned only here;
        // children are destroyed before their parents (QP before CQ; QP and MR before the PD and
        // the context, which `dev` releases after this body).
        unsafe {
            if !self.qp.is_null() {
                ibv_destroy_qp(self.qp);
            }
            if !self.ah.is_null() {
                ibv_destroy_ah(self.ah);
            }
            if !self.cq.is_null() {
                ibv_destroy_cq(self.cq);
            }
            if !self.mr.is_null() {
                ibv_dereg_mr(self.mr);
            }
        }
    }
}

/// A start PSN that differs between sessions (24 bits).
fn initial_psn() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    (t ^ std::process::id().rotate_left(12)) & 0x00ff_ffff
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// A verbs call's nonzero return code as an error (the code is an errno value).
pub fn rc_err(what: &str, rc: i32) -> String {
    format!("{what}: {}", std::io::Error::from_raw_os_error(rc.abs()))
}

impl Rc {
    /// Open the chosen device (or share it, with its PD, if open), create MR, CQ and an RC QP in
    /// INIT with every receive posted.
    fn open(
        choice: Choice,
        sysfs_root: &str,
        traffic_class: u8,
        sl: u8,
        qp_type: QpType,
    ) -> Result<Self, String> {
        let dev = Shared::get(&choice.device)?;
        let mut ep = Rc {
            roce: choice.preferred(),
            agreed: false,
            sysfs_root: sysfs_root.to_string(),
            local: attr::Local {
                port: choice.port,
                gid_index: choice.gid_index(),
                traffic_class,
                sl,
                mtu: ibv_mtu::IBV_MTU_1024 as u8,
                psn: initial_psn(),
            },
            choice,
            seen: dev.next_event(),
            qp_type,
            ah: ptr::null_mut(),
            remote_qpn: 0,
            cq: ptr::null_mut(),
            qp: ptr::null_mut(),
            mr: ptr::null_mut(),
            buf: Buf::new(SLOT * (RECV_SLOTS + 1))?,
            gid: [0; 16],
            lid: 0,
            dev,
        };
        let ctx = ep.dev.ctx;
        let (port, what) = (ep.local.port, ep.choice.to_string());
        // SAFETY: ibv_port_attr is plain data (integers); all-zero is a valid value to be filled.
        let mut pa: ibv_port_attr = unsafe { std::mem::zeroed() };
        // SAFETY: ctx is a live context; `pa` is a valid out-pointer of the right size.
        let rc = unsafe { ___ibv_query_port(ctx, port, &mut pa) };
        if rc != 0 {
            return Err(rc_err(&format!("{what}: query port"), rc));
        }
        if pa.state != ibv_port_state::IBV_PORT_ACTIVE {
            return Err(format!("{what}: port is not active"));
        }
        ep.lid = pa.lid;
        ep.local.mtu = pa.active_mtu as u8;
        // SAFETY: ibv_gid is a 16-byte union; zero is valid.
        let mut g: ibv_gid = unsafe { std::mem::zeroed() };
        // SAFETY: ctx is live; `g` is a valid out-pointer.
        let rc = unsafe { ibv_query_gid(ctx, port, ep.local.gid_index as i32, &mut g) };
        if rc != 0 {
            return Err(rc_err(&format!("{what}: query GID"), rc));
        }
        // SAFETY: every bit pattern of the union is a valid [u8; 16].
        ep.gid = unsafe { g.raw };
        ep.create()?;
        let (mut a, m) = match qp_type {
            QpType::Rc => attr::init(port),
            QpType::Ud => attr::ud_init(port),
        };
        ep.modify(&mut a, m, "QP to INIT")?;
        for slot in 0..RECV_SLOTS {
            ep.post_recv(slot)?;
        }
        Ok(ep)
    }

    fn create(&mut self) -> Result<(), String> {
        let (ctx, pd) = (self.dev.ctx, self.dev.pd);
        // SAFETY: ctx and pd are live (held by `dev`); the returned pointers are checked and owned
        // by `self` (freed in Drop).
        unsafe {
            // The buffer lives in `self` as long as the MR that covers it (dropped after it).
            self.mr = ibv_reg_mr(
                pd,
                self.buf.ptr.cast(),
                self.buf.len,
                ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32,
            );
            if self.mr.is_null() {
                return Err(os_err("ibv_reg_mr"));
            }
            let cqe = 2 * (RECV_SLOTS as i32 + 16);
            self.cq = ibv_create_cq(ctx, cqe, ptr::null_mut(), ptr::null_mut(), 0);
            if self.cq.is_null() {
                return Err(os_err("ibv_create_cq"));
            }
            let mut init: ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = self.cq;
            init.recv_cq = self.cq;
            init.qp_type = match self.qp_type {
                QpType::Rc => ibv_qp_type::IBV_QPT_RC,
                QpType::Ud => ibv_qp_type::IBV_QPT_UD,
            };
            init.cap.max_send_wr = 16;
            init.cap.max_recv_wr = RECV_SLOTS as u32;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.cap.max_inline_data = SLOT as u32;
            self.qp = ibv_create_qp(pd, &mut init);
            if self.qp.is_null() {
                return Err(os_err("ibv_create_qp"));
            }
        }
        Ok(())
    }

    fn modify(&self, a: &mut ibv_qp_attr, m: ibv_qp_attr_mask, what: &str) -> Result<(), String> {
        // SAFETY: qp is live; `a` is a valid, initialised ibv_qp_attr for the duration of the call.
        let rc = unsafe { ibv_modify_qp(self.qp, a, m.0 as i32) };
        if rc != 0 {
            return Err(rc_err(what, rc));
        }
        Ok(())
    }

    /// Bytes before the payload in a receive: the GRH under UD, none under RC.
    fn grh(&self) -> usize {
        match self.qp_type {
            QpType::Rc => 0,
            QpType::Ud => GRH_LEN,
        }
    }

    fn post_recv(&mut self, slot: usize) -> Result<(), String> {
        let mut sge = ibv_sge {
            addr: self.buf.ptr as u64 + (slot * SLOT) as u64,
            length: SLOT as u32,
            // SAFETY: mr is live.
            lkey: unsafe { (*self.mr).lkey },
        };
        let mut wr = ibv_recv_wr {
            wr_id: slot as u64,
            next: ptr::null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad = ptr::null_mut();
        // SAFETY: qp is live; `wr` and `sge` are valid for the call (the provider copies them);
        // the slot lies inside the registered buffer, which outlives the QP.
        let rc = unsafe { ibv_post_recv(self.qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(rc_err("ibv_post_recv", rc));
        }
        Ok(())
    }
}

impl Endpoint for Rc {
    fn info(&self) -> ConnInfo {
        ConnInfo {
            // SAFETY: qp is live for the endpoint's life.
            qpn: unsafe { (*self.qp).qp_num },
            psn: self.local.psn,
            lid: self.lid,
            gid: self.gid,
            mtu: self.local.mtu,
            versions: if self.agreed {
                Versions::only(self.roce)
            } else {
                self.choice.versions()
            },
        }
    }

    fn connect(&mut self, remote: &ConnInfo) -> Result<(), String> {
        let v = gid::agree(self.choice.versions(), remote.versions)?;
        let index = self
            .choice
            .entry(v)
            .map(|e| e.index)
            .ok_or_else(|| format!("no {v} GID"))?;
        (self.roce, self.agreed, self.local.gid_index) = (v, true, index);
        if self.qp_type == QpType::Ud {
            let mut path = attr::path(&self.local, remote);
            // SAFETY: the PD is live (held by `dev`); `path` is valid for the call; the handle is
            // owned by `self` and destroyed in Drop before the PD can go.
            self.ah = unsafe { ibv_create_ah(self.dev.pd, &mut path) };
            if self.ah.is_null() {
                return Err(os_err("ibv_create_ah"));
            }
            self.remote_qpn = remote.qpn;
            let (mut a, m) = attr::ud_rtr();
            self.modify(&mut a, m, "QP to RTR")?;
            let (mut a, m) = attr::ud_rts(self.local.psn);
            return self.modify(&mut a, m, "QP to RTS");
        }
        let (mut a, m) = attr::rtr(&self.local, remote);
        self.modify(&mut a, m, "QP to RTR")?;
        let (mut a, m) = attr::rts(self.local.psn);
        self.modify(&mut a, m, "QP to RTS")
    }

    /// Inline (the provider copies the bytes at post time) and signaled, so the send queue drains
    /// through the CQ.
    fn send(&mut self, data: &[u8; PROBE_LEN]) -> Result<(), String> {
        let off = RECV_SLOTS * SLOT;
        if !self.buf.write(off, data) {
            return Err("the send slot is outside the probe buffer".into());
        }
        let mut sge = ibv_sge {
            addr: self.buf.ptr as u64 + off as u64,
            length: PROBE_LEN as u32,
            // SAFETY: mr is live.
            lkey: unsafe { (*self.mr).lkey },
        };
        // SAFETY: ibv_send_wr is plain data (ints, pointers, unions of those); zero is valid.
        let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = SEND_WR_ID;
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        wr.opcode = ibv_wr_opcode::IBV_WR_SEND;
        wr.send_flags = (ibv_send_flags::IBV_SEND_INLINE | ibv_send_flags::IBV_SEND_SIGNALED).0;
        if self.qp_type == QpType::Ud {
            wr.wr.ud = ud_t {
                ah: self.ah,
                remote_qpn: self.remote_qpn,
                remote_qkey: attr::QKEY,
            };
        }
        let mut bad = ptr::null_mut();
        // SAFETY: qp is live; wr/sge are valid for the call; inline data is copied by the provider.
        let rc = unsafe { ibv_post_send(self.qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(rc_err("ibv_post_send", rc));
        }
        Ok(())
    }

    fn poll(&mut self, out: &mut Vec<[u8; PROBE_LEN]>) -> Result<usize, String> {
        // SAFETY: ibv_wc is plain data; zero is valid and poll_cq overwrites what it returns.
        let mut wcs: [ibv_wc; 8] = unsafe { std::mem::zeroed() };
        // SAFETY: cq is live; `wcs` has room for 8 entries.
        let n = unsafe { ibv_poll_cq(self.cq, wcs.len() as i32, wcs.as_mut_ptr()) };
        if n < 0 {
            return Err(rc_err("ibv_poll_cq", n));
        }
        let mut got = 0;
        for wc in wcs.iter().take(n as usize) {
            if wc.status != ibv_wc_status::IBV_WC_SUCCESS {
                // SAFETY: ibv_wc_status_str returns a static string for any status.
                let why = unsafe { CStr::from_ptr(ibv_wc_status_str(wc.status)) };
                return Err(format!("completion failed: {}", why.to_string_lossy()));
            }
            if wc.wr_id == SEND_WR_ID || wc.opcode != ibv_wc_opcode::IBV_WC_RECV {
                continue;
            }
            let slot = wc.wr_id as usize;
            let grh = self.grh();
            if slot < RECV_SLOTS && holds_a_probe(wc.byte_len, grh) {
                if let Some(p) = self.buf.read(slot * SLOT + grh) {
                    out.push(p);
                    got += 1;
                }
            }
            if slot < RECV_SLOTS {
                self.post_recv(slot)?;
            }
        }
        Ok(got)
    }

    fn event(&mut self) -> Option<String> {
        let events = self.dev.events_after(self.seen);
        let dev = &self.choice.device;
        let mut why = None;
        for e in events {
            self.seen = e.seq + 1;
            let (kind, name) = event_kind(e.ty);
            let ours = match kind {
                EventKind::Fatal => true,
                EventKind::CqFatal => e.element == self.cq as usize,
                EventKind::QpFatal => e.element == self.qp as usize,
                EventKind::Port | EventKind::GidChange => e.port == self.local.port as i32,
                EventKind::Ignore => false,
            };
            if !ours || why.is_some() {
                continue;
            }
            why = match kind {
                // Any entry of the port's table changing raises it: rebuild only if ours did.
                EventKind::GidChange => gid::still_holds(
                    &self.sysfs_root,
                    &self.choice,
                    self.local.gid_index,
                    self.roce,
                )
                .err()
                .map(|why| format!("{dev}: {name}: {why}")),
                _ => Some(format!("{dev}: {name}")),
            };
        }
        why
    }

    fn describe(&self) -> String {
        match self.qp_type {
            QpType::Rc => self.choice.path(self.roce),
            QpType::Ud => format!("{} over UD", self.choice.path(self.roce)),
        }
    }

    fn retransmit_after_ns(&self) -> Option<u64> {
        (self.qp_type == QpType::Rc).then(|| attr::ack_timeout_ns(attr::ACK_TIMEOUT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raw_event_has_libibverbs_layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(size_of::<RawAsyncEvent>(), size_of::<ibv_async_event>());
        assert_eq!(align_of::<RawAsyncEvent>(), align_of::<ibv_async_event>());
        assert_eq!(
            offset_of!(RawAsyncEvent, event_type),
            offset_of!(ibv_async_event, event_type)
        );
        assert_eq!(size_of::<ibv_event_type>(), size_of::<u32>());
    }

    #[test]
    fn any_event_number_has_a_meaning_and_a_name() {
        assert_eq!(
            event_kind(8),
            (EventKind::Fatal, "local catastrophic error".into())
        );
        assert_eq!(event_kind(18).0, EventKind::GidChange);
        assert_eq!(event_kind(10).0, EventKind::Port);
        assert_eq!(event_kind(9).0, EventKind::Ignore);
        assert_eq!(
            event_kind(ibv_event_type::IBV_EVENT_WQ_FATAL as u32).1,
            "WQ fatal"
        );
        assert_eq!(
            event_kind(1234),
            (EventKind::Ignore, "unknown event 1234".into()),
            "an event this build does not know is named, never undefined behaviour"
        );
    }

    #[test]
    fn a_short_receive_is_not_a_probe() {
        assert!(holds_a_probe(PROBE_LEN as u32, 0));
        assert!(!holds_a_probe(0, 0));
        assert!(!holds_a_probe(PROBE_LEN as u32 - 1, 0));
        assert!(!holds_a_probe(64, 0));
        // UD: the GRH, then the probe.
        assert!(holds_a_probe((GRH_LEN + PROBE_LEN) as u32, GRH_LEN));
        assert!(!holds_a_probe(PROBE_LEN as u32, GRH_LEN));
    }

    #[test]
    fn the_buffer_copies_only_inside_its_bounds() {
        let b = Buf::new(2 * SLOT).expect("alloc");
        let p = [7u8; PROBE_LEN];
        assert!(b.write(SLOT, &p));
        assert_eq!(b.read(SLOT), Some(p));
        assert_eq!(b.read(0), Some([0u8; PROBE_LEN]), "zeroed");
        assert!(!b.write(2 * SLOT - 1, &p));
        assert_eq!(b.read(2 * SLOT - PROBE_LEN + 1), None);
        assert_eq!(b.read(usize::MAX), None);
        assert_eq!(b.ptr as usize % Buf::ALIGN, 0);
    }

    #[test]
    fn return_codes_become_the_error_text() {
        assert_eq!(
            rc_err("ibv_post_send", 12),
            "ibv_post_send: Cannot allocate memory (os error 12)"
        );
        assert_eq!(
            rc_err("QP to RTR", -22),
            "QP to RTR: Invalid argument (os error 22)"
        );
    }

    #[test]
    fn without_rdma_in_the_kernel_the_reason_is_clear() {
        // On hosts with RDMA this test has nothing to check.
        if std::path::Path::new("/sys/class/infiniband").exists() {
            return;
        }
        assert_eq!(devices(), Err(UNAVAILABLE.to_string()));
        assert_eq!(describe(&VerbsOptions::default()), UNAVAILABLE);
        let e = Verbs(VerbsOptions::default())
            .open("127.0.0.1".parse().expect("ip"))
            .err();
        assert_eq!(e, Some(UNAVAILABLE.to_string()));
    }
}
