package v1

// MinorClassDevices is the first ABI minor version whose hosts fill
// PCIDevice.class_devices. An empty list from a host whose
// InitRequest.host_abi_minor is older means "not looked", not "none": a
// policy that resolves /sys/class paths through it must tell the two apart
// (abi/README.md section 18).
const MinorClassDevices = 5
