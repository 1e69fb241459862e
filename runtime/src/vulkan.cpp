//===- vulkan.cpp - running embedded SPIR-V kernels through Vulkan --------===//
//
// One process-wide Vulkan device (the first with a compute queue), created
// on first use. Every buffer is host-visible and coherent: simple and right
// for lavapipe and integrated GPUs (one memory); a discrete GPU would want
// device-local weights behind a staging copy.
//
//===----------------------------------------------------------------------===//

#include "lowbit/vulkan.h"
#include "lowbit/error.h"

#include "bitstream.h"
#include "byte_order.h"
#include "ggml_blocks.h"
#include "group.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if LOWBIT_HAVE_VULKAN
#include <vulkan/vulkan.h>

#include <chrono>
#include <mutex>
#endif

namespace lowbit {

GpuDType parse_gpu_dtype(const std::string &name) {
  if (name == "f32")
    return GpuDType::F32;
  if (name == "f16")
    return GpuDType::F16;
  if (name == "bf16")
    return GpuDType::BF16;
  throw Error("unknown dtype '" + name + "' (expected f32, f16, bf16)");
}

std::string gpu_dtype_name(GpuDType type) {
  switch (type) {
  case GpuDType::F32:
    return "f32";
  case GpuDType::F16:
    return "f16";
  case GpuDType::BF16:
    return "bf16";
  }
  return "?";
}

/// The bits of v in a 16-bit `type`.
static uint16_t to_bits16(GpuDType type, float v) {
  return type == GpuDType::F16 ? float_to_half(v) : float_to_bf16(v);
}

static float from_bits16(GpuDType type, uint16_t h) {
  return type == GpuDType::F16 ? half_to_float(h) : bf16_to_float(h);
}

float round_to_dtype(GpuDType type, float v) {
  return type == GpuDType::F32 ? v : from_bits16(type, to_bits16(type, v));
}

/// Throws the error activation.cpp gives for the first non-finite value,
/// or for the first finite one that `type` rounds to infinity.
static void check_finite(const float *X, int64_t N, int64_t K,
                         GpuDType type) {
  for (int64_t i = 0; i < N * K; ++i) {
    std::string at =
        "activation [" + std::to_string(i / K) + ", " + std::to_string(i % K) +
        "] ";
    if (!std::isfinite(X[i]))
      throw Error(at + "is " +
                  (std::isnan(X[i]) ? "NaN" : X[i] > 0 ? "+inf" : "-inf"));
    if (!std::isfinite(round_to_dtype(type, X[i])))
      throw Error(at + "= " + std::to_string(X[i]) + " overflows " +
                  gpu_dtype_name(type) + " (--dtype)");
  }
}

size_t GpuWeights::bytes() const {
  return (codes.size() + blocks.size()) * sizeof(uint32_t);
}

/// The ggml block formats: codes q - code_offset + z in b bits (z =
/// 2^(b-1) for the formats with a code offset, 0 with a min or a codebook,
/// whose codes are its indices), then GGML SCALES (lowbit/vulkan.h).
static void pack_ggml_weights(const PackedWeights &W, const GgmlBlockType &type,
                              int64_t words, GpuWeights &out) {
  const int bits = type.code_bits;
  const int zero = detail::kernel_code_offset(type);
  const int parts = type.has_min ? 2 : 1; // d, and m or dmin
  const int subBlocks = type.sub_scale_bits ? type.block / type.scale_block : 0;
  const int scaleBits = type.sub_scale_bits;
  const int64_t superWords = int64_t(parts) * subBlocks * scaleBits / 32;
  const int64_t perRow = W.K / type.block, records = W.M * perRow;
  const int64_t halfBase = 2 * records * superWords;
  out.blocks.assign(size_t(records * superWords + (records * parts + 1) / 2),
                    0);
  auto putHalf = [&](int64_t at, uint16_t h) {
    out.blocks[size_t(at / 2)] |= uint32_t(h) << (16 * (at % 2));
  };
  const detail::BlockCodec &codec = detail::block_codec(type.kind);
  const int64_t rowBytes = W.row_bytes();
  std::vector<int8_t> q(size_t(W.K));
  std::vector<uint8_t> codes(size_t(W.K));
  int sc[16], mins[16];
  // A record's sub-scales, then its sub-minimums, as codes of scaleBits
  // bits (two's complement cut to scaleBits for the signed ones).
  uint8_t fields[32];
  const unsigned fieldMask = (1u << scaleBits) - 1;
  auto *bytes = reinterpret_cast<uint8_t *>(out.codes.data());
  auto *blockBytes = reinterpret_cast<uint8_t *>(out.blocks.data());
  for (int64_t m = 0; m < W.M; ++m) {
    const uint8_t *row = W.codes.data() + m * rowBytes;
    detail::check_block_row(type, row, W.K, m);
    detail::decode_block_row_codes(type, row, W.K, q.data());
    for (int64_t k = 0; k < W.K; ++k)
      codes[size_t(k)] = uint8_t(q[size_t(k)] - type.code_offset + zero);
    detail::pack_codes(codes.data(), W.K, bits, bytes + m * words * 4);
    for (int64_t b = 0; b < perRow; ++b) {
      const uint8_t *blk = row + b * type.block_bytes;
      const int64_t record = m * perRow + b;
      putHalf(halfBase + record * parts,
              detail::load_le<uint16_t>(blk + type.d_offset));
      if (type.has_min)
        putHalf(halfBase + record * parts + 1,
                detail::load_le<uint16_t>(blk + type.min_offset));
      if (!subBlocks)
        continue;
      codec.sub_scales(blk, sc, mins);
      for (int j = 0; j < subBlocks; ++j) {
        fields[j] = uint8_t(unsigned(sc[j]) & fieldMask);
        if (type.has_min)
          fields[subBlocks + j] = uint8_t(unsigned(mins[j]) & fieldMask);
      }
      detail::pack_codes(fields, int64_t(parts) * subBlocks, scaleBits,
                         blockBytes + record * superWords * 4);
    }
  }
}

GpuWeights pack_gpu_weights(const PackedWeights &W) {
  GpuWeights out;
  const GgmlBlockType *type = ggml_block_type(W.format.kind);
  const bool group = W.format.kind == FormatKind::Group;
  if (!type && !group && W.format.kind != FormatKind::I2S)
    throw Error("vulkan: no GPU kernel reads " + W.format.name() + " weights");
  const int bits = type ? type->code_bits : group ? W.format.bits : 2;
  const int64_t words = type || group ? W.K * bits / 32 : (W.K + 15) / 16;
  out.codes.assign(size_t(W.M * words), 0);
  if (type) {
    pack_ggml_weights(W, *type, words, out);
    return out;
  }
  // i2s and w<b>gG: the canonical rows, padded to words.
  const int64_t rowBytes = W.row_bytes();
  auto *bytes = reinterpret_cast<uint8_t *>(out.codes.data());
  for (int64_t m = 0; m < W.M; ++m)
    std::memcpy(bytes + m * words * 4, W.codes.data() + m * rowBytes,
                size_t(rowBytes));
  if (!group) {
    out.blocks.assign(1, 0);
    return out;
  }
  // Per 32-block (s, z) as floats.
  std::vector<detail::ScaleZero> row(size_t(W.K / 32));
  for (int64_t m = 0; m < W.M; ++m) {
    detail::row_block_scales(W, m, row.data());
    for (const detail::ScaleZero &sz : row) {
      uint32_t s;
      std::memcpy(&s, &sz.s, 4);
      const float z = float(sz.z);
      uint32_t zBits;
      std::memcpy(&zBits, &z, 4);
      out.blocks.push_back(s);
      out.blocks.push_back(zBits);
    }
  }
  return out;
}

#if LOWBIT_HAVE_VULKAN

namespace {

// VK_KHR_cooperative_matrix's feature struct, for Vulkan headers older than
// 1.3.255 (Debian 12 has 1.3.239); the layout is the extension's.
constexpr char kCoopMatrixExtension[] = "VK_KHR_cooperative_matrix";
constexpr VkStructureType kCoopMatrixFeaturesType = VkStructureType(1000506000);
struct CoopMatrixFeatures {
  VkStructureType sType = kCoopMatrixFeaturesType;
  void *pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

void check(VkResult result, const char *what) {
  if (result != VK_SUCCESS)
    throw Error(std::string("vulkan: ") + what + " failed (VkResult " +
                std::to_string(int(result)) + ")");
}

/// The process-wide instance, device and queue.
struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  std::string name;
  bool intDot = false; // shaderIntegerDotProduct, enabled when present
  bool storage16 = false; // storageBuffer16BitAccess and shaderInt16, too
  // VK_KHR_cooperative_matrix with its feature and shaderInt8 (the
  // matrix = true kernels), enabled when present.
  bool coopMatrix = false;
  std::mutex mutex;    // one submission at a time on the queue

  Device() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "lowbit";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) {
      instance = VK_NULL_HANDLE;
      return;
    }
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
    for (VkPhysicalDevice candidate : devices) {
      uint32_t families = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, nullptr);
      std::vector<VkQueueFamilyProperties> props(families);
      vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families,
                                               props.data());
      for (uint32_t f = 0; f < families; ++f)
        if (props[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          physical = candidate;
          queueFamily = f;
          break;
        }
      if (physical)
        break;
    }
    if (!physical)
      return;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queueInfo.queueFamilyIndex = queueFamily;
    queueInfo.queueCount = 1;
    queueInfo.pQueuePriorities = &priority;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    uint32_t extensionCount = 0;
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                         nullptr);
    std::vector<VkExtensionProperties> extensions(extensionCount);
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                         extensions.data());
    bool hasCoopMatrix = false;
    for (const VkExtensionProperties &e : extensions)
      hasCoopMatrix |= std::strcmp(e.extensionName, kCoopMatrixExtension) == 0;
    VkPhysicalDeviceVulkan11Features features11{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features features12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features features13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    CoopMatrixFeatures coopFeatures;
    VkPhysicalDeviceFeatures2 features{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    if (props.apiVersion >= VK_API_VERSION_1_3) {
      features.pNext = &features11;
      features11.pNext = &features12;
      features12.pNext = &features13;
      if (hasCoopMatrix)
        features13.pNext = &coopFeatures;
      vkGetPhysicalDeviceFeatures2(physical, &features);
      intDot = features13.shaderIntegerDotProduct;
      storage16 = features11.storageBuffer16BitAccess &&
                  features.features.shaderInt16;
      coopMatrix = hasCoopMatrix && coopFeatures.cooperativeMatrix &&
                   features12.shaderInt8;
    }
    // Only the features kernels may use are enabled.
    VkPhysicalDeviceVulkan13Features enable13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    enable13.shaderIntegerDotProduct = intDot;
    CoopMatrixFeatures enableCoop;
    enableCoop.cooperativeMatrix = VK_TRUE;
    if (coopMatrix)
      enable13.pNext = &enableCoop;
    VkPhysicalDeviceVulkan12Features enable12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    enable12.shaderInt8 = coopMatrix;
    enable12.pNext = &enable13;
    VkPhysicalDeviceVulkan11Features enable11{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    enable11.storageBuffer16BitAccess = storage16;
    enable11.pNext = &enable12;
    VkPhysicalDeviceFeatures2 enable{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    enable.features.shaderInt16 = storage16;
    enable.pNext = &enable11;
    VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    if (props.apiVersion >= VK_API_VERSION_1_3)
      deviceInfo.pNext = &enable;
    deviceInfo.queueCreateInfoCount = 1;
    deviceInfo.pQueueCreateInfos = &queueInfo;
    const char *coopName = kCoopMatrixExtension;
    if (coopMatrix) {
      deviceInfo.enabledExtensionCount = 1;
      deviceInfo.ppEnabledExtensionNames = &coopName;
    }
    if (vkCreateDevice(physical, &deviceInfo, nullptr, &device) !=
        VK_SUCCESS) {
      device = VK_NULL_HANDLE;
      return;
    }
    vkGetDeviceQueue(device, queueFamily, 0, &queue);
    name = props.deviceName;
  }

  ~Device() {
    if (device)
      vkDestroyDevice(device, nullptr);
    if (instance)
      vkDestroyInstance(instance, nullptr);
  }

  bool ok() const { return device != VK_NULL_HANDLE; }

  uint32_t hostMemoryType(uint32_t allowed) const {
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(physical, &props);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) &&
          (props.memoryTypes[i].propertyFlags & want) == want)
        return i;
    throw Error("vulkan: no host-visible coherent memory type");
  }
};

Device &device() {
  static Device d;
  return d;
}

/// A host-visible storage buffer, mapped for its whole life.
struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *data = nullptr;
  size_t bytes = 0;

  Buffer() = default;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { release(); }

  void release() {
    if (!device)
      return;
    vkDestroyBuffer(device, buffer, nullptr);
    vkFreeMemory(device, memory, nullptr);
    device = VK_NULL_HANDLE;
    bytes = 0;
  }

  /// Makes the buffer at least `size` bytes (contents not kept).
  void reserve(Device &d, size_t size) {
    size = std::max<size_t>(size, 4);
    if (device && bytes >= size)
      return;
    release();
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(d.device, &info, nullptr, &buffer), "vkCreateBuffer");
    device = d.device;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d.device, buffer, &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = d.hostMemoryType(req.memoryTypeBits);
    check(vkAllocateMemory(d.device, &alloc, nullptr, &memory),
          "vkAllocateMemory");
    check(vkBindBufferMemory(d.device, buffer, memory, 0),
          "vkBindBufferMemory");
    check(vkMapMemory(d.device, memory, 0, VK_WHOLE_SIZE, 0, &data),
          "vkMapMemory");
    bytes = size;
  }
};

constexpr uint32_t kBindings = 6;

} // namespace

struct VulkanKernel::Impl {
  Device &d = device();
  int64_t M = 0, K = 0, words = 0, wgM = 1, wgN = 1;
  bool preKernel = false;
  GpuDType dtype = GpuDType::F32;
  /// Bytes of one X / Y element.
  size_t elementBytes() const { return dtype == GpuDType::F32 ? 4 : 2; }
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  VkPipeline mpgemm = VK_NULL_HANDLE, actScales = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  Buffer buffers[kBindings]; // X, W, Y, params, scales, block scales
  double seconds = 0;
  size_t weightBytes = 0; // of W and blocks (GpuWeights::bytes)

  ~Impl() {
    VkDevice dev = d.device;
    if (!dev)
      return;
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, commandPool, nullptr);
    vkDestroyDescriptorPool(dev, pool, nullptr);
    vkDestroyPipeline(dev, mpgemm, nullptr);
    vkDestroyPipeline(dev, actScales, nullptr);
    vkDestroyPipelineLayout(dev, pipelineLayout, nullptr);
    vkDestroyDescriptorSetLayout(dev, setLayout, nullptr);
    vkDestroyShaderModule(dev, shader, nullptr);
  }

  VkPipeline makePipeline(const char *entry) {
    VkComputePipelineCreateInfo info{
        VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = shader;
    info.stage.pName = entry;
    info.layout = pipelineLayout;
    VkPipeline pipeline;
    check(vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &info,
                                   nullptr, &pipeline),
          "vkCreateComputePipelines");
    return pipeline;
  }

  void build(const SpirvKernel &kernel) {
    VkShaderModuleCreateInfo shaderInfo{
        VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    shaderInfo.codeSize = size_t(kernel.info[8]) * 4;
    shaderInfo.pCode = kernel.words;
    check(vkCreateShaderModule(d.device, &shaderInfo, nullptr, &shader),
          "vkCreateShaderModule");
    VkDescriptorSetLayoutBinding bindings[kBindings] = {};
    for (uint32_t i = 0; i < kBindings; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo layoutInfo{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layoutInfo.bindingCount = kBindings;
    layoutInfo.pBindings = bindings;
    check(vkCreateDescriptorSetLayout(d.device, &layoutInfo, nullptr,
                                      &setLayout),
          "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo pipelineInfo{
        VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pipelineInfo.setLayoutCount = 1;
    pipelineInfo.pSetLayouts = &setLayout;
    check(vkCreatePipelineLayout(d.device, &pipelineInfo, nullptr,
                                 &pipelineLayout),
          "vkCreatePipelineLayout");
    mpgemm = makePipeline("mpgemm");
    if (preKernel)
      actScales = makePipeline("act_scales");

    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindings};
    VkDescriptorPoolCreateInfo poolInfo{
        VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    poolInfo.maxSets = 1;
    poolInfo.poolSizeCount = 1;
    poolInfo.pPoolSizes = &size;
    check(vkCreateDescriptorPool(d.device, &poolInfo, nullptr, &pool),
          "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo setInfo{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    setInfo.descriptorPool = pool;
    setInfo.descriptorSetCount = 1;
    setInfo.pSetLayouts = &setLayout;
    check(vkAllocateDescriptorSets(d.device, &setInfo, &set),
          "vkAllocateDescriptorSets");
    VkCommandPoolCreateInfo commandInfo{
        VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    commandInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    commandInfo.queueFamilyIndex = d.queueFamily;
    check(vkCreateCommandPool(d.device, &commandInfo, nullptr, &commandPool),
          "vkCreateCommandPool");
    VkCommandBufferAllocateInfo allocInfo{
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocInfo.commandPool = commandPool;
    allocInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocInfo.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(d.device, &allocInfo, &commands),
          "vkAllocateCommandBuffers");
    VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(d.device, &fenceInfo, nullptr, &fence),
          "vkCreateFence");
  }

  void bindBuffers() {
    VkDescriptorBufferInfo infos[kBindings];
    VkWriteDescriptorSet writes[kBindings];
    for (uint32_t i = 0; i < kBindings; ++i) {
      infos[i] = {buffers[i].buffer, 0, VK_WHOLE_SIZE};
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(d.device, kBindings, writes, 0, nullptr);
  }

  void record(int64_t N) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                            pipelineLayout, 0, 1, &set, 0, nullptr);
    if (preKernel) {
      vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, actScales);
      vkCmdDispatch(commands, uint32_t(N), 1, 1);
      VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
      vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                           &barrier, 0, nullptr, 0, nullptr);
    }
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, mpgemm);
    vkCmdDispatch(commands, uint32_t((M + wgM - 1) / wgM),
                  uint32_t((N + wgN - 1) / wgN), 1);
    check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
  }
};

bool vulkan_available() { return device().ok(); }

std::string vulkan_device_name() { return device().name; }

VulkanKernel::VulkanKernel(const SpirvKernel &kernel, const PackedWeights &W)
    : impl_(std::make_unique<Impl>()) {
  Impl &k = *impl_;
  if (!k.d.ok())
    throw Error("vulkan: no Vulkan device with a compute queue (see "
                "'lowbit targets')");
  const int64_t *info = kernel.info;
  if (info[0] != 3)
    throw Error("vulkan: kernel ABI version " + std::to_string(info[0]) +
                ", this runtime knows 3");
  // Weights: 0 i2s, 1..4 w<b>gG, 6..13 a ggml block format by its encoding
  // and sub-scale bits (lowbit/vulkan.h), with the code bits b = 32 Kw / K.
  const int64_t weights = info[10];
  const bool group = weights >= 1 && weights <= 4;
  const bool block = weights >= 6 && weights <= 13;
  const int64_t blockBits = info[2] > 0 ? info[3] * 32 / info[2] : 0;
  auto blockMatches = [&](const GgmlBlockType &t) {
    const int64_t code = weights - 6;
    return t.has_min == ((code & 1) != 0) &&
           (t.scale_block == 16) == ((code & 2) != 0) &&
           (t.codebook != nullptr) == ((code & 4) != 0) &&
           t.sub_scale_bits == info[14] && t.code_bits == blockBits;
  };
  const GgmlBlockType *type = ggml_block_type(W.format.kind);
  const bool formatOk =
      block   ? type && blockMatches(*type)
      : group ? W.format.kind == FormatKind::Group && W.format.bits == weights
              : weights == 0 && W.format.kind == FormatKind::I2S;
  if (!formatOk || info[1] != W.M || info[2] != W.K) {
    std::string kernelFormat = "an unknown format";
    if (block) {
      int count = 0;
      const GgmlBlockType *types = ggml_block_types(&count);
      for (int t = 0; t < count; ++t)
        if (blockMatches(types[t]))
          kernelFormat = types[t].name;
    } else if (group) {
      kernelFormat = "w" + std::to_string(weights) + "gG";
    } else if (weights == 0) {
      kernelFormat = "i2s";
    }
    throw Error("vulkan: the kernel is for " + kernelFormat + " " +
                std::to_string(info[1]) + " x " + std::to_string(info[2]) +
                " weights, got " + W.format.name() + " " + std::to_string(W.M) +
                " x " + std::to_string(W.K));
  }
  if (info[9] && !k.d.intDot)
    throw Error("vulkan: the kernel uses the integer dot product "
                "(#lowbit.gpu int_dot) but '" +
                k.d.name + "' lacks shaderIntegerDotProduct");
  if (info[11] < 0 || info[11] > 2)
    throw Error("vulkan: unknown X / Y element type " +
                std::to_string(info[11]) + " in the kernel");
  if (info[12] && !k.d.storage16)
    throw Error("vulkan: the kernel reads and writes 16-bit storage buffers "
                "(--dtype " +
                gpu_dtype_name(GpuDType(info[11])) + " on this target) but '" +
                k.d.name +
                "' lacks storageBuffer16BitAccess or shaderInt16 (target "
                "spirv-vulkan packs them in 32-bit words and runs anywhere)");
  if (info[13] && !k.d.coopMatrix)
    throw Error("vulkan: the kernel uses cooperative matrices (#lowbit.gpu "
                "matrix = true) but '" +
                k.d.name +
                "' lacks VK_KHR_cooperative_matrix (or shaderInt8); run "
                "the spirv-xe2 kernel without matrix = true here");
  k.dtype = GpuDType(info[11]);
  k.M = W.M;
  k.K = W.K;
  k.words = info[3];
  k.wgM = info[5];
  k.wgN = info[6];
  k.preKernel = info[7] != 0;
  k.build(kernel);

  const GpuWeights packed = pack_gpu_weights(W);
  auto upload = [&](Buffer &buffer, const std::vector<uint32_t> &words) {
    buffer.reserve(k.d, words.size() * 4);
    std::memcpy(buffer.data, words.data(), words.size() * 4);
  };
  upload(k.buffers[1], packed.codes);
  upload(k.buffers[5], packed.blocks);
  k.weightBytes = packed.bytes();
  k.buffers[3].reserve(k.d, 8);
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &W.tensor_scale, 4);
  static_cast<uint32_t *>(k.buffers[3].data)[1] = scaleBits;
}

VulkanKernel::~VulkanKernel() = default;

void VulkanKernel::run(const float *X, int64_t N, float *Y) {
  Impl &k = *impl_;
  check_finite(X, N, k.K, k.dtype);
  std::lock_guard<std::mutex> lock(k.d.mutex);
  // 16-bit buffers are padded to whole 32-bit words (the packed form).
  auto bytes = [&](int64_t count) {
    return (size_t(count) * k.elementBytes() + 3) / 4 * 4;
  };
  k.buffers[0].reserve(k.d, bytes(N * k.K));
  k.buffers[2].reserve(k.d, bytes(N * k.M));
  k.buffers[4].reserve(k.d, size_t(N) * 4);
  if (k.dtype == GpuDType::F32) {
    std::memcpy(k.buffers[0].data, X, size_t(N * k.K) * 4);
  } else {
    auto *x16 = static_cast<uint16_t *>(k.buffers[0].data);
    for (int64_t i = 0; i < N * k.K; ++i)
      x16[i] = to_bits16(k.dtype, X[i]);
  }
  static_cast<uint32_t *>(k.buffers[3].data)[0] = uint32_t(N);
  k.bindBuffers();
  check(vkResetCommandBuffer(k.commands, 0), "vkResetCommandBuffer");
  k.record(N);
  check(vkResetFences(k.d.device, 1, &k.fence), "vkResetFences");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &k.commands;
  auto start = std::chrono::steady_clock::now();
  check(vkQueueSubmit(k.d.queue, 1, &submit, k.fence), "vkQueueSubmit");
  check(vkWaitForFences(k.d.device, 1, &k.fence, VK_TRUE, UINT64_MAX),
        "vkWaitForFences");
  k.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
  if (k.dtype == GpuDType::F32) {
    std::memcpy(Y, k.buffers[2].data, size_t(N * k.M) * 4);
  } else {
    const auto *y16 = static_cast<const uint16_t *>(k.buffers[2].data);
    for (int64_t i = 0; i < N * k.M; ++i)
      Y[i] = from_bits16(k.dtype, y16[i]);
  }
}

double VulkanKernel::last_dispatch_seconds() const { return impl_->seconds; }

size_t VulkanKernel::weight_bytes() const { return impl_->weightBytes; }

GpuDType VulkanKernel::dtype() const { return impl_->dtype; }

#else // !LOWBIT_HAVE_VULKAN

struct VulkanKernel::Impl {};

bool vulkan_available() { return false; }

std::string vulkan_device_name() { return ""; }

VulkanKernel::VulkanKernel(const SpirvKernel &, const PackedWeights &) {
  throw Error("this lowbit runtime was built without Vulkan (LOWBIT_VULKAN "
              "off)");
}

VulkanKernel::~VulkanKernel() = default;

void VulkanKernel::run(const float *X, int64_t N, float *) {
  check_finite(X, N, 1, GpuDType::F32);
}

double VulkanKernel::last_dispatch_seconds() const { return 0; }

size_t VulkanKernel::weight_bytes() const { return 0; }

GpuDType VulkanKernel::dtype() const { return GpuDType::F32; }

#endif

} // namespace lowbit
