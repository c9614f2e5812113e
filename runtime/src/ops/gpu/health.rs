//! What the rest of the runtime may know about the GPU: which adapter was
//! chosen ([`AdapterSummary`]) and whether the GPU backend can run work
//! ([`GpuHealth`]).
//!
//! These types carry no wgpu types, so they exist with the same shape whether
//! or not the crate is built with the `gpu` feature; the router uses them for
//! its hardware fingerprint and its "is a GPU usable" veto.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of device an adapter drives, as the driver reports it.
///
/// Software rasterisers (Mesa's lavapipe/llvmpipe, WARP) report [`Cpu`](GpuDeviceType::Cpu);
/// they count as a GPU only under `ADAPTIVE_KERNEL_GPU=software`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuDeviceType {
    /// A discrete GPU: its own memory, behind a bus.
    DiscreteGpu,
    /// A GPU sharing memory with the CPU.
    IntegratedGpu,
    /// A GPU exposed through a hypervisor.
    VirtualGpu,
    /// A device the driver does not classify.
    Other,
    /// A software implementation running on the CPU (lavapipe, llvmpipe, WARP).
    Cpu,
}

impl GpuDeviceType {
    /// Preference when several adapters qualify: lower is better
    /// (discrete > integrated > virtual > other > cpu).
    pub const fn rank(self) -> u8 {
        match self {
            GpuDeviceType::DiscreteGpu => 0,
            GpuDeviceType::IntegratedGpu => 1,
            GpuDeviceType::VirtualGpu => 2,
            GpuDeviceType::Other => 3,
            GpuDeviceType::Cpu => 4,
        }
    }

    /// Whether this is a software adapter (`DeviceType::Cpu`).
    pub const fn is_software(self) -> bool {
        matches!(self, GpuDeviceType::Cpu)
    }
}

impl fmt::Display for GpuDeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            GpuDeviceType::DiscreteGpu => "discrete",
            GpuDeviceType::IntegratedGpu => "integrated",
            GpuDeviceType::VirtualGpu => "virtual",
            GpuDeviceType::Other => "other",
            GpuDeviceType::Cpu => "cpu",
        })
    }
}

/// The graphics API an adapter is driven through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuApi {
    /// Vulkan (Linux, Windows, Android; lavapipe on machines without a GPU).
    Vulkan,
    /// Apple's Metal.
    Metal,
    /// Direct3D 12.
    Dx12,
    /// OpenGL / OpenGL ES (never chosen by this backend, listed for completeness).
    Gl,
    /// A browser's WebGPU.
    BrowserWebGpu,
    /// An API this version does not know.
    Other,
}

impl fmt::Display for GpuApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            GpuApi::Vulkan => "Vulkan",
            GpuApi::Metal => "Metal",
            GpuApi::Dx12 => "DX12",
            GpuApi::Gl => "GL",
            GpuApi::BrowserWebGpu => "WebGPU",
            GpuApi::Other => "other",
        })
    }
}

/// The adapter the GPU backend chose, as its driver describes it.
///
/// Everything the router needs for a hardware fingerprint: two machines with
/// the same summary run GPU kernels at the same speed, as far as we can tell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdapterSummary {
    /// Adapter name, e.g. `NVIDIA GeForce RTX 4090` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Driver name, e.g. `NVIDIA` or `llvmpipe` (may be empty on some APIs).
    pub driver: String,
    /// Driver version string, e.g. `Mesa 22.3.6 (LLVM 15.0.6)` (may be empty).
    pub driver_info: String,
    /// The API the adapter is driven through.
    pub backend: GpuApi,
    /// Discrete, integrated, virtual, other or a software (`Cpu`) adapter.
    pub device_type: GpuDeviceType,
    /// PCI vendor id (or the API's equivalent; 0 when unknown).
    pub vendor: u32,
    /// PCI device id (or the API's equivalent; 0 when unknown).
    pub device: u32,
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        match (self.driver.is_empty(), self.driver_info.is_empty()) {
            (true, true) => {}
            (false, true) => write!(f, ", {}", self.driver)?,
            (true, false) => write!(f, ", {}", self.driver_info)?,
            (false, false) => write!(f, ", {} {}", self.driver, self.driver_info)?,
        }
        f.write_str(")")
    }
}

/// Whether the GPU backend can run work, and if not, why.
///
/// The states move in one direction: `Uninitialized` → `Starting` when
/// start-up begins ([`start`](super::start), or the first call that needs the
/// device) → `Ready` or `Unavailable` when it ends, and `Ready` → `Failed`
/// when the device fails
/// (device lost, out of memory, a failed buffer map, a validation error). A
/// failed device is not re-created: every later GPU call runs its SIMD
/// fallback, and the router stops choosing the GPU (its
/// [`is_available`](super::is_available) is false).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuHealth {
    /// Start-up has not begun: no adapter has been looked for.
    Uninitialized,
    /// The adapter and device are being created (usually on a background
    /// thread); GPU ops called now wait for the outcome.
    Starting,
    /// The device is up; GPU ops run on this adapter.
    Ready(AdapterSummary),
    /// There is no usable device: the policy forbids it (`ADAPTIVE_KERNEL_GPU=off`,
    /// or only software adapters exist under the default policy), no adapter
    /// was found, the device could not be created, or the crate was built
    /// without its `gpu` feature. GPU ops run their SIMD fallback.
    Unavailable {
        /// Why, in words (names the policy variable where that is the cause).
        reason: String,
    },
    /// The device worked, then failed; GPU ops run their SIMD fallback from now on.
    Failed {
        /// The first failure, in words.
        reason: String,
    },
}

impl GpuHealth {
    /// Whether GPU ops currently run on a device.
    pub fn is_ready(&self) -> bool {
        matches!(self, GpuHealth::Ready(_))
    }
}

impl fmt::Display for GpuHealth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuHealth::Uninitialized => f.write_str("uninitialized"),
            GpuHealth::Starting => f.write_str("starting"),
            GpuHealth::Ready(adapter) => write!(f, "ready on {adapter}"),
            GpuHealth::Unavailable { reason } => write!(f, "unavailable: {reason}"),
            GpuHealth::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lavapipe() -> AdapterSummary {
        AdapterSummary {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            driver: "llvmpipe".into(),
            driver_info: "Mesa 22.3.6 (LLVM 15.0.6)".into(),
            backend: GpuApi::Vulkan,
            device_type: GpuDeviceType::Cpu,
            vendor: 0x10005,
            device: 0,
        }
    }

    #[test]
    fn ranks_discrete_first_and_software_last() {
        let mut kinds = [
            GpuDeviceType::Cpu,
            GpuDeviceType::VirtualGpu,
            GpuDeviceType::DiscreteGpu,
            GpuDeviceType::Other,
            GpuDeviceType::IntegratedGpu,
        ];
        kinds.sort_by_key(|k| k.rank());
        assert_eq!(
            kinds,
            [
                GpuDeviceType::DiscreteGpu,
                GpuDeviceType::IntegratedGpu,
                GpuDeviceType::VirtualGpu,
                GpuDeviceType::Other,
                GpuDeviceType::Cpu
            ]
        );
        assert!(GpuDeviceType::Cpu.is_software());
        assert!(!GpuDeviceType::VirtualGpu.is_software());
    }

    #[test]
    fn displays_name_api_type_and_driver() {
        assert_eq!(
            lavapipe().to_string(),
            "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, cpu, llvmpipe Mesa 22.3.6 (LLVM 15.0.6))"
        );
        let health = GpuHealth::Unavailable { reason: "no adapter".into() };
        assert_eq!(health.to_string(), "unavailable: no adapter");
        assert!(!health.is_ready());
        assert_eq!(GpuHealth::Starting.to_string(), "starting");
        assert!(!GpuHealth::Starting.is_ready());
        assert!(GpuHealth::Ready(lavapipe()).is_ready());
    }

    #[test]
    fn summary_round_trips_through_json() {
        let json = serde_json::to_string(&lavapipe()).unwrap();
        assert!(json.contains("\"device_type\":\"cpu\""), "{json}");
        assert_eq!(serde_json::from_str::<AdapterSummary>(&json).unwrap(), lavapipe());
    }
}
