//! RDMA verbs pinger (in progress).
