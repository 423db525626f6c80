/* linux/kfd_ioctl.h includes <drm/drm.h>, which Debian ships only as
 * libdrm's <libdrm/drm.h>; kfd_ioctl.h needs nothing from it but the
 * kernel's fixed-width types. */
#include <linux/ioctl.h>
#include <linux/types.h>
