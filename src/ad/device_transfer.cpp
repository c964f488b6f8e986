// Derivatives across devices: x.to(device) of an array with derivatives is a hub whose
// tangents are copied forward with the value and whose adjoints are copied back to x's
// device, so a loss computed on a GPU differentiates parameters kept on the CPU (and back).
#include <kiln/detail/ad_api.h>

namespace kiln::detail {
namespace {

class DeviceTransfer final : public CustomCallbacks {
 public:
  DeviceTransfer(Device from, Device to) : from_(from), to_(to) {}
  std::string name() const override { return std::string("to(\"") + device_name(to_) + "\")"; }
  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    return {g[0] ? make_on_device(g[0], to_) : 0};
  }
  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    return {g[0] ? make_on_device(g[0], from_) : 0};
  }

 private:
  Device from_, to_;
};

}  // namespace

AdValue ad_to_device(AdOperand x, Device device) {
  Index moved = make_on_device(x.value, device);
  Device from = node_device(x.value);
  if (!x.ad || from == device) {
    if (x.ad) ad_inc_ref(x.ad);
    return {moved, x.ad};
  }
  std::vector<AdValue> connected = ad_custom(std::make_shared<DeviceTransfer>(from, device), {x}, {moved});
  dec_ref(moved);
  return connected[0];
}

}  // namespace kiln::detail
