//! TLS for NX-API: verification always on. A pinned SHA-256 fingerprint of the leaf certificate
//! (switches ship self-signed certificates), a CA file, or the system roots. A refused
//! certificate carries its fingerprint, so the error can tell the user what to pin.

pub use crate::config::fingerprint::parse_fingerprint;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, OtherError, RootCertStore,
    SignatureScheme,
};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

/// Where trust comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// SHA-256 of the leaf certificate's DER.
    Pinned([u8; 32]),
    CaFile(std::path::PathBuf),
    SystemRoots,
}

/// A certificate the verifier refused, with what the user needs to pin it.
#[derive(Debug, thiserror::Error)]
#[error("fingerprint {fingerprint}{}", reason_suffix(.reason))]
pub struct Untrusted {
    /// `SHA256:base64`, as `nxapi_fingerprint` accepts it.
    pub fingerprint: String,
    pub reason: String,
}

fn reason_suffix(r: &str) -> String {
    if r.is_empty() {
        String::new()
    } else {
        format!(" ({r})")
    }
}

/// `SHA256:<base64, no padding>` of a DER certificate (the form OpenSSH uses for keys).
pub fn fingerprint(der: &[u8]) -> String {
    format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(der)))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(aws_lc_rs::default_provider())
}

/// The client config for one switch, or why it cannot be built (unreadable CA file).
pub fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, String> {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match trust {
        Trust::Pinned(pin) => Arc::new(Pinned {
            pin: *pin,
            provider: provider.clone(),
        }),
        Trust::CaFile(path) => Arc::new(Reporting(webpki(ca_roots(path)?, &provider)?)),
        Trust::SystemRoots => Arc::new(Reporting(webpki(system_roots()?, &provider)?)),
    };
    let mut cfg = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

fn webpki(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, String> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("TLS setup: {e}"))
}

fn ca_roots(path: &Path) -> Result<RootCertStore, String> {
    let what = format!("nxapi_ca_file {}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{what}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: {e}"))?;
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(format!("{what}: no usable PEM certificate in it"));
    }
    Ok(roots)
}

fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        return Err(
            "no system CA certificates found: set nxapi_fingerprint or nxapi_ca_file".into(),
        );
    }
    Ok(roots)
}

fn untrusted(der: &[u8], reason: String) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(Untrusted {
        fingerprint: fingerprint(der),
        reason,
    }))))
}

/// The `Untrusted` inside a handshake error, if that is why it failed.
pub fn as_untrusted(e: &std::io::Error) -> Option<&Untrusted> {
    match e.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(inner))) => {
            inner.downcast_ref::<Untrusted>()
        }
        _ => None,
    }
}

/// The leaf's SHA-256 must equal the pin. Chain, name and dates are not checked: the pin is the
/// trust (switch certificates are self-signed, named after nothing, often expired). The
/// handshake signature is still checked, so the peer must hold the pinned certificate's key.
#[derive(Debug)]
struct Pinned {
    pin: [u8; 32],
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got: [u8; 32] = Sha256::digest(end_entity.as_ref()).into();
        if got == self.pin {
            Ok(ServerCertVerified::assertion())
        } else {
            let want = format!("SHA256:{}", STANDARD_NO_PAD.encode(self.pin));
            Err(untrusted(end_entity, format!("pinned {want}")))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The WebPKI verifier, with the refused leaf's fingerprint added to its error.
#[derive(Debug)]
struct Reporting(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for Reporting {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            .map_err(|e| {
                let reason = match &e {
                    rustls::Error::InvalidCertificate(c) => c.to_string(),
                    other => other.to_string(),
                };
                untrusted(end_entity, reason)
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_in_every_spelling() {
        let der = b"not really a certificate";
        let digest: [u8; 32] = Sha256::digest(der).into();
        let fp = fingerprint(der);
        assert!(fp.starts_with("SHA256:") && !fp.ends_with('='));
        assert_eq!(parse_fingerprint(&fp), Ok(digest));
        assert_eq!(parse_fingerprint(&format!("{fp}=")), Ok(digest));
        let hex: Vec<String> = digest.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(parse_fingerprint(&hex.join(":")), Ok(digest));
        assert_eq!(parse_fingerprint(&hex.concat().to_lowercase()), Ok(digest));
        assert!(parse_fingerprint("SHA256:abc").is_err());
        assert!(parse_fingerprint(&hex.concat()[..62]).is_err());
        assert!(parse_fingerprint("zz".repeat(32).as_str()).is_err());
        assert!(parse_fingerprint("").is_err());
    }

    #[test]
    fn ca_file_problems_are_named() {
        let dir = tempfile::tempdir().expect("ok");
        let missing = dir.path().join("none.pem");
        let e = client_config(&Trust::CaFile(missing)).expect_err("an error");
        assert!(e.contains("nxapi_ca_file") && e.contains("none.pem"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not pem\n").expect("ok");
        let e = client_config(&Trust::CaFile(empty)).expect_err("an error");
        assert!(e.contains("no usable PEM certificate"), "{e}");
    }
}
