//! TEMPORARY: replaced by the wgpu backend.
pub use super::scalar::*;

/// Whether a usable GPU adapter exists under the current policy.
pub fn is_available() -> bool {
    false
}
/// Adapter description for the fingerprint.
pub fn fingerprint() -> Option<String> {
    None
}
