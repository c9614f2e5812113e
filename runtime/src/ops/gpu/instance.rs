//! The wgpu instance the device is created from: a compute-only Vulkan
//! instance on Linux, wgpu's own instance elsewhere or when that fails.
//!
//! # Why not `wgpu::Instance::new`
//! wgpu enables every window-system extension the loader offers
//! (`VK_KHR_xlib_surface`, `_xcb_surface`, `_wayland_surface`, display and
//! colour-space extensions) so that any later window can present. Mesa's
//! implicit layer `VK_LAYER_MESA_device_select` reacts to a Wayland or XCB
//! surface extension by connecting to the display server while it enumerates
//! physical devices; without a session that prints
//! `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` twice
//! on stderr, in every program that merely computes. This backend never
//! presents, so on Linux it creates the Vulkan instance itself (with `ash`,
//! the same version wgpu-hal uses) enabling only the extensions wgpu-hal needs
//! to drive compute, and hands it to wgpu-hal with `Instance::from_raw`. No
//! environment variable is read or changed for this.
//!
//! # When the compute-only instance is not used
//! Off Linux; when wgpu's debug or validation flags are asked for
//! (`WGPU_DEBUG`, `WGPU_VALIDATION`, …: those need wgpu's debug messenger,
//! which only its own constructor sets up); and when any step of the raw path
//! fails (no Vulkan loader, `vkCreateInstance` refused). Then the instance is
//! `wgpu::Instance::new` over [`BACKENDS`], as before; the reason is logged at
//! debug level.

use trueno::backends::gpu::wgpu;

/// The backends whose adapters are enumerated: Vulkan, Metal, DX12 and
/// browser WebGPU (not GL; see `device.rs`).
pub(super) const BACKENDS: wgpu::Backends = wgpu::Backends::PRIMARY;

/// The instance to enumerate adapters on (see the module docs).
pub(super) fn create() -> wgpu::Instance {
    // No validation layers unless asked for (WGPU_VALIDATION=1 and friends).
    let flags = wgpu::InstanceFlags::empty().with_env();
    #[cfg(target_os = "linux")]
    match vulkan::compute_only(flags) {
        Ok(instance) => return instance,
        Err(reason) => {
            tracing::debug!(target: "adaptive_kernel", reason, "compute-only Vulkan instance not used; using wgpu's");
        }
    }
    wgpu::Instance::new(&wgpu::InstanceDescriptor { backends: BACKENDS, flags, ..Default::default() })
}

#[cfg(target_os = "linux")]
mod vulkan {
    use std::ffi::CStr;

    use ash::{khr, vk};
    use trueno::backends::gpu::wgpu;
    use wgpu::hal;

    /// The instance extensions a compute-only wgpu-hal instance enables, when
    /// the loader offers them: the properties2 queries wgpu-hal uses to read
    /// adapter features and limits. Everything else wgpu-hal's
    /// `desired_extensions` lists is for surfaces, displays or debugging.
    const COMPUTE_EXTENSIONS: [&CStr; 1] = [khr::get_physical_device_properties2::NAME];

    /// The Vulkan API version wgpu-hal 27 asks for on a 1.1+ loader (it asks
    /// for 1.0 on a 1.0 loader); `Instance::init_with_callback` does the same.
    const HAL_API_VERSION: u32 = vk::API_VERSION_1_3;

    /// A wgpu instance over a Vulkan instance with only [`COMPUTE_EXTENSIONS`].
    pub(super) fn compute_only(flags: wgpu::InstanceFlags) -> Result<wgpu::Instance, String> {
        let needs_wgpu_setup =
            wgpu::InstanceFlags::DEBUG | wgpu::InstanceFlags::VALIDATION | wgpu::InstanceFlags::GPU_BASED_VALIDATION;
        if flags.intersects(needs_wgpu_setup) {
            return Err(format!("wgpu instance flags {flags:?} ask for debugging or validation"));
        }
        // SAFETY: loads the system's Vulkan loader (libvulkan.so.1) and resolves
        // its global entry points, exactly as wgpu-hal's own constructor does; the
        // `Entry` keeps the library loaded for as long as it or the instance lives
        // (wgpu-hal stores it beside the instance).
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
        // SAFETY: a global command with no preconditions.
        let loader_version = match unsafe { entry.try_enumerate_instance_version() } {
            Ok(Some(version)) => version,
            Ok(None) => vk::API_VERSION_1_0,
            Err(e) => return Err(format!("vkEnumerateInstanceVersion failed: {e}")),
        };
        let available = hal::vulkan::Instance::desired_extensions(&entry, loader_version, flags)
            .map_err(|e| format!("listing instance extensions failed: {e}"))?;
        let extensions: Vec<&'static CStr> =
            available.into_iter().filter(|name| COMPUTE_EXTENSIONS.contains(name)).collect();
        // SAFETY: a global command with no preconditions.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(|e| format!("vkEnumerateInstanceLayerProperties failed: {e}"))?;
        let has_nv_optimus = layers.iter().any(|l| l.layer_name_as_c_str() == Ok(c"VK_LAYER_NV_optimus"));

        let api_version = if loader_version < vk::API_VERSION_1_1 { vk::API_VERSION_1_0 } else { HAL_API_VERSION };
        // wgpu-hal's engine name, so drivers apply the same per-engine behaviour as
        // to an instance wgpu created itself.
        let app_info = vk::ApplicationInfo::default()
            .application_name(c"adaptive-kernel")
            .application_version(1)
            .engine_name(c"wgpu-hal")
            .engine_version(2)
            .api_version(api_version);
        let names: Vec<*const std::ffi::c_char> = extensions.iter().map(|name| name.as_ptr()).collect();
        let create_info = vk::InstanceCreateInfo::default().application_info(&app_info).enabled_extension_names(&names);
        // SAFETY: `create_info` and everything it points to (`app_info`, `names`
        // and the 'static extension names) outlive the call; every extension
        // named was reported available by this loader; no layers are named.
        let raw = unsafe { entry.create_instance(&create_info, None) }
            .map_err(|e| format!("vkCreateInstance failed: {e}"))?;

        // SAFETY: `from_raw`'s contract, point by point:
        // - `raw` was created from `entry`, with `api_version` as wgpu-hal picks it
        //   for `loader_version`, exactly `extensions` enabled, and `flags`
        //   (which ask for no debug messenger, hence `None`).
        // - `extensions` is deliberately a subset of `desired_extensions()`: what
        //   it leaves out are the surface, display, DRM and swap-chain colour-space
        //   extensions. wgpu-hal 27 uses those only when creating a surface
        //   (`create_surface*`, which checks `extensions` and returns an error)
        //   or a DRM display surface (`create_surface_from_drm`); this backend
        //   calls neither. Adapter enumeration and device creation use only
        //   properties2 (and debug utils, not enabled here), kept when available.
        // - `android_sdk_version` 0: not Android.
        // - `drop_callback` is `None`: wgpu-hal owns `raw` and destroys it when
        //   the last reference goes.
        let hal_instance = unsafe {
            hal::vulkan::Instance::from_raw(
                entry,
                raw,
                loader_version,
                0,
                None,
                extensions,
                flags,
                wgpu::MemoryBudgetThresholds::default(),
                has_nv_optimus,
                None,
            )
        }
        .map_err(|e| format!("wrapping the Vulkan instance failed: {e}"))?;
        // SAFETY: `hal_instance` is a valid, usable Vulkan instance of the Vulkan
        // backend (created just above); wgpu takes sole ownership of it.
        Ok(unsafe { wgpu::Instance::from_hal::<hal::api::Vulkan>(hal_instance) })
    }
}
