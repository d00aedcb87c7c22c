// Typed node attributes, as ONNX defines them (graph-valued attributes are not supported:
// the frontend refuses ops such as If/Loop that carry them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "collage/tensor.h"

namespace collage {

using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

// "int", "float", "string", "ints", "floats", "strings", "tensor".
const char* AttributeTypeName(const Attribute& attribute);

class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  void Set(const std::string& name, Attribute value) { values_[name] = std::move(value); }
  void Erase(const std::string& name) { values_.erase(name); }
  const Attribute* Find(const std::string& name) const;

  // Getters return the default when the attribute is absent or has another type
  // (an int attribute read as float converts).
  int64_t GetInt(const std::string& name, int64_t default_value) const;
  float GetFloat(const std::string& name, float default_value) const;
  std::string GetString(const std::string& name, const std::string& default_value) const;
  std::vector<int64_t> GetInts(const std::string& name,
                               const std::vector<int64_t>& default_value = {}) const;
  std::vector<float> GetFloats(const std::string& name,
                               const std::vector<float>& default_value = {}) const;
  std::vector<std::string> GetStrings(const std::string& name) const;
  // Empty Tensor when absent.
  Tensor GetTensor(const std::string& name) const;

  const std::map<std::string, Attribute>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

 private:
  std::map<std::string, Attribute> values_;  // ordered: signatures and exports are stable
};

}  // namespace collage
