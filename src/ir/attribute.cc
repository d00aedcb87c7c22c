#include "collage/sdk/attribute.h"

namespace collage {

const char* AttributeTypeName(const Attribute& attribute) {
  static const char* kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return kNames[attribute.index()];
}

const Attribute* Attributes::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

int64_t Attributes::GetInt(const std::string& name, int64_t default_value) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return default_value;
  if (auto* v = std::get_if<int64_t>(a)) return *v;
  return default_value;
}

float Attributes::GetFloat(const std::string& name, float default_value) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return default_value;
  if (auto* v = std::get_if<float>(a)) return *v;
  if (auto* v = std::get_if<int64_t>(a)) return static_cast<float>(*v);
  return default_value;
}

std::string Attributes::GetString(const std::string& name, const std::string& default_value) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return default_value;
  if (auto* v = std::get_if<std::string>(a)) return *v;
  return default_value;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name,
                                         const std::vector<int64_t>& default_value) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return default_value;
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  return default_value;
}

std::vector<float> Attributes::GetFloats(const std::string& name,
                                         const std::vector<float>& default_value) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return default_value;
  if (auto* v = std::get_if<std::vector<float>>(a)) return *v;
  return default_value;
}

std::vector<std::string> Attributes::GetStrings(const std::string& name) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return {};
  if (auto* v = std::get_if<std::vector<std::string>>(a)) return *v;
  return {};
}

Tensor Attributes::GetTensor(const std::string& name) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return Tensor();
  if (auto* v = std::get_if<Tensor>(a)) return *v;
  return Tensor();
}

}  // namespace collage
