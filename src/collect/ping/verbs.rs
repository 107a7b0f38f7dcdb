//! RDMA RC ping-pong over verbs (rdma-sys), for the pinger and for `rocetop pingd`.
//!
//! One RC QP per session; QPN, PSN, LID, GID and MTU are exchanged over the TCP control connection
//! (`proto::Msg::Info`), which stays open for the session's life. Sends are inline (24-byte probes),
//! receives are pre-posted, the CQ is busy-polled. The pinger runs on its own OS thread (never on the
//! async runtime's workers) and keeps one probe in flight; a probe that left late (the previous one
//! held the CQ) is timed from its slot, so no stall is hidden (`stats::rtt_ns`).
//!
//! All `unsafe` of rocetop lives in this file.
#![allow(unsafe_code)]

use super::proto::{ConnInfo, PROBE_LEN};
use super::{VerbsOptions, gid};
use rdma_sys::*;
use std::ffi::CStr;
use std::ptr;

pub const UNAVAILABLE: &str = "RDMA unavailable on this host: no devices";
const RECV_SLOTS: usize = 16;
const SLOT: usize = 64;
const SEND_WR_ID: u64 = u64::MAX;
/// Slack for the pinger's own timer (a sleeping thread wakes within ~100 µs; the last stretch spins).
const SLACK_NS: u64 = 200_000;

mod session;
pub use session::{serve, start_pinger};

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

/// "rocep11s0 port 1, GID index 3 (RoCE v2)" or why RDMA cannot be used, for pingd's start line.
pub fn describe(opts: &VerbsOptions) -> String {
    match Endpoint::open(opts) {
        Ok(ep) => format!(
            "{} port {}, GID index {}{}",
            ep.device,
            ep.port,
            ep.gid_index,
            if ep.detected { " (RoCE v2)" } else { "" }
        ),
        Err(e) => e,
    }
}

/// The verbs objects of one RC endpoint, destroyed in reverse order on drop.
struct Endpoint {
    device: String,
    port: u8,
    gid_index: u8,
    detected: bool,
    traffic_class: u8,
    ctx: *mut ibv_context,
    pd: *mut ibv_pd,
    cq: *mut ibv_cq,
    qp: *mut ibv_qp,
    mr: *mut ibv_mr,
    buf: Vec<u8>,
    gid: [u8; 16],
    lid: u16,
    mtu: u8,
    psn: u32,
}

// SAFETY: an Endpoint is used by one thread at a time (it is moved into its session's thread); the
// verbs objects it owns are not tied to the thread that created them.
unsafe impl Send for Endpoint {}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // SAFETY: each pointer is either null or a live object created by `open`, owned only here;
        // children are destroyed before their parents (QP, CQ, MR before PD before the context).
        unsafe {
            if !self.qp.is_null() {
                ibv_destroy_qp(self.qp);
            }
            if !self.cq.is_null() {
                ibv_destroy_cq(self.cq);
            }
            if !self.mr.is_null() {
                ibv_dereg_mr(self.mr);
            }
            if !self.pd.is_null() {
                ibv_dealloc_pd(self.pd);
            }
            if !self.ctx.is_null() {
                ibv_close_device(self.ctx);
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

impl Endpoint {
    /// Open the device, create PD, MR, CQ and an RC QP in INIT with every receive posted.
    fn open(opts: &VerbsOptions) -> Result<Self, String> {
        let names = devices()?;
        let device = match &opts.device {
            Some(d) if names.contains(d) => d.clone(),
            Some(d) => return Err(format!("no RDMA device {d} (have {})", names.join(", "))),
            None => names.first().cloned().ok_or(UNAVAILABLE)?,
        };
        let mut ep = Endpoint {
            port: opts.port,
            gid_index: 0,
            detected: false,
            traffic_class: opts.traffic_class,
            ctx: ptr::null_mut(),
            pd: ptr::null_mut(),
            cq: ptr::null_mut(),
            qp: ptr::null_mut(),
            mr: ptr::null_mut(),
            buf: vec![0u8; SLOT * (RECV_SLOTS + 1)],
            gid: [0; 16],
            lid: 0,
            mtu: ibv_mtu::IBV_MTU_1024 as u8,
            psn: initial_psn(),
            device,
        };
        ep.ctx = open_device(&ep.device)?;
        // SAFETY: ibv_port_attr is plain data (integers); all-zero is a valid value to be filled.
        let mut pa: ibv_port_attr = unsafe { std::mem::zeroed() };
        // SAFETY: ctx is a live context; `pa` is a valid out-pointer of the right size.
        if unsafe { ___ibv_query_port(ep.ctx, ep.port, &mut pa) } != 0 {
            return Err(os_err(&format!("{} port {}: query", ep.device, ep.port)));
        }
        if pa.state != ibv_port_state::IBV_PORT_ACTIVE {
            return Err(format!("{} port {} is not active", ep.device, ep.port));
        }
        ep.lid = pa.lid;
        ep.mtu = pa.active_mtu as u8;
        (ep.gid_index, ep.detected) = match opts.gid_index {
            Some(i) => (i, false),
            None => match gid::detect(&opts.sysfs_root, &ep.device, ep.port) {
                Some(i) => (i, true),
                None => (0, false),
            },
        };
        // SAFETY: ibv_gid is a 16-byte union; zero is valid.
        let mut g: ibv_gid = unsafe { std::mem::zeroed() };
        // SAFETY: ctx is live; `g` is a valid out-pointer.
        if unsafe { ibv_query_gid(ep.ctx, ep.port, ep.gid_index as i32, &mut g) } != 0 {
            return Err(os_err(&format!("{} GID index {}", ep.device, ep.gid_index)));
        }
        // SAFETY: every bit pattern of the union is a valid [u8; 16].
        ep.gid = unsafe { g.raw };
        // SAFETY: ctx is live; the returned pointers are checked and owned by `ep` (freed in Drop).
        unsafe {
            ep.pd = ibv_alloc_pd(ep.ctx);
            if ep.pd.is_null() {
                return Err(os_err("ibv_alloc_pd"));
            }
            // The buffer lives in `ep` (a Vec never resized) as long as the MR that covers it.
            ep.mr = ibv_reg_mr(
                ep.pd,
                ep.buf.as_mut_ptr().cast(),
                ep.buf.len(),
                ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32,
            );
            if ep.mr.is_null() {
                return Err(os_err("ibv_reg_mr"));
            }
            ep.cq = ibv_create_cq(
                ep.ctx,
                2 * (RECV_SLOTS as i32 + 16),
                ptr::null_mut(),
                ptr::null_mut(),
                0,
            );
            if ep.cq.is_null() {
                return Err(os_err("ibv_create_cq"));
            }
            let mut init: ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = ep.cq;
            init.recv_cq = ep.cq;
            init.qp_type = ibv_qp_type::IBV_QPT_RC;
            init.cap.max_send_wr = 16;
            init.cap.max_recv_wr = RECV_SLOTS as u32;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.cap.max_inline_data = SLOT as u32;
            ep.qp = ibv_create_qp(ep.pd, &mut init);
            if ep.qp.is_null() {
                return Err(os_err("ibv_create_qp"));
            }
        }
        ep.modify_init()?;
        for slot in 0..RECV_SLOTS {
            ep.post_recv(slot)?;
        }
        Ok(ep)
    }

    fn info(&self) -> ConnInfo {
        ConnInfo {
            // SAFETY: qp is live for the endpoint's life.
            qpn: unsafe { (*self.qp).qp_num },
            psn: self.psn,
            lid: self.lid,
            gid: self.gid,
            mtu: self.mtu,
        }
    }

    fn modify(
        &self,
        attr: &mut ibv_qp_attr,
        mask: ibv_qp_attr_mask,
        what: &str,
    ) -> Result<(), String> {
        // SAFETY: qp is live; `attr` is a valid, initialised ibv_qp_attr for the duration of the call.
        if unsafe { ibv_modify_qp(self.qp, attr, mask.0 as i32) } != 0 {
            return Err(os_err(what));
        }
        Ok(())
    }

    fn modify_init(&self) -> Result<(), String> {
        // SAFETY: ibv_qp_attr is plain data; zero is a valid start.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = self.port;
        a.qp_access_flags = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0;
        let m = ibv_qp_attr_mask::IBV_QP_STATE
            | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
            | ibv_qp_attr_mask::IBV_QP_PORT
            | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
        self.modify(&mut a, m, "QP to INIT")
    }

    /// RTR then RTS towards `remote`.
    fn connect(&self, remote: &ConnInfo) -> Result<(), String> {
        // SAFETY: plain data, zero is valid.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_RTR;
        a.path_mtu = self.mtu.min(remote.mtu).max(1) as ibv_mtu::Type;
        a.dest_qp_num = remote.qpn;
        a.rq_psn = remote.psn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = remote.lid;
        a.ah_attr.port_num = self.port;
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid.raw = remote.gid;
        a.ah_attr.grh.sgid_index = self.gid_index;
        a.ah_attr.grh.hop_limit = 64;
        a.ah_attr.grh.traffic_class = self.traffic_class;
        let m = ibv_qp_attr_mask::IBV_QP_STATE
            | ibv_qp_attr_mask::IBV_QP_AV
            | ibv_qp_attr_mask::IBV_QP_PATH_MTU
            | ibv_qp_attr_mask::IBV_QP_DEST_QPN
            | ibv_qp_attr_mask::IBV_QP_RQ_PSN
            | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
            | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
        self.modify(&mut a, m, "QP to RTR")?;
        // SAFETY: plain data, zero is valid.
        let mut a: ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ibv_qp_state::IBV_QPS_RTS;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = self.psn;
        a.max_rd_atomic = 1;
        let m = ibv_qp_attr_mask::IBV_QP_STATE
            | ibv_qp_attr_mask::IBV_QP_TIMEOUT
            | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
            | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
            | ibv_qp_attr_mask::IBV_QP_SQ_PSN
            | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
        self.modify(&mut a, m, "QP to RTS")
    }

    fn post_recv(&mut self, slot: usize) -> Result<(), String> {
        let mut sge = ibv_sge {
            addr: self.buf.as_ptr() as u64 + (slot * SLOT) as u64,
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
        if unsafe { ibv_post_recv(self.qp, &mut wr, &mut bad) } != 0 {
            return Err(os_err("ibv_post_recv"));
        }
        Ok(())
    }

    /// Send `data` inline (signaled, so the send queue drains through the CQ).
    fn send(&mut self, data: &[u8]) -> Result<(), String> {
        let off = RECV_SLOTS * SLOT;
        let n = data.len().min(SLOT);
        self.buf[off..off + n].copy_from_slice(&data[..n]);
        let mut sge = ibv_sge {
            addr: self.buf.as_ptr() as u64 + off as u64,
            length: n as u32,
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
        let mut bad = ptr::null_mut();
        // SAFETY: qp is live; wr/sge are valid for the call; inline data is copied by the provider.
        if unsafe { ibv_post_send(self.qp, &mut wr, &mut bad) } != 0 {
            return Err(os_err("ibv_post_send"));
        }
        Ok(())
    }

    /// Poll the CQ once: received payloads (copied out, receive re-posted). A failed completion
    /// ends the session with its status.
    fn poll(&mut self, out: &mut Vec<[u8; PROBE_LEN]>) -> Result<usize, String> {
        // SAFETY: ibv_wc is plain data; zero is valid and poll_cq overwrites what it returns.
        let mut wcs: [ibv_wc; 8] = unsafe { std::mem::zeroed() };
        // SAFETY: cq is live; `wcs` has room for 8 entries.
        let n = unsafe { ibv_poll_cq(self.cq, wcs.len() as i32, wcs.as_mut_ptr()) };
        if n < 0 {
            return Err(os_err("ibv_poll_cq"));
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
            let mut p = [0u8; PROBE_LEN];
            if let Some(b) = self.buf.get(slot * SLOT..slot * SLOT + PROBE_LEN) {
                p.copy_from_slice(b);
                out.push(p);
                got += 1;
            }
            self.post_recv(slot)?;
        }
        Ok(got)
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

#[cfg(test)]
mod tests {
    use super::super::{Link, lock, tcp};
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    #[test]
    fn without_rdma_in_the_kernel_the_reason_is_clear() {
        // On hosts with RDMA this test has nothing to check.
        if std::path::Path::new("/sys/class/infiniband").exists() {
            return;
        }
        assert_eq!(devices(), Err(UNAVAILABLE.to_string()));
        assert_eq!(describe(&VerbsOptions::default()), UNAVAILABLE);
        let link = Arc::new(Mutex::new(Link::new(&super::super::Options::with_rate(
            10.0,
        ))));
        let plan = tcp::Plan {
            addr: "127.0.0.1:9".into(),
            period: Duration::from_millis(100),
            deadline: Duration::from_secs(1),
            epoch: Instant::now(),
        };
        start_pinger(
            plan,
            VerbsOptions::default(),
            link.clone(),
            Arc::new(AtomicBool::new(false)),
        );
        assert_eq!(
            lock(&link, |l| l.notes.clone()),
            vec![UNAVAILABLE.to_string()]
        );
    }
}
