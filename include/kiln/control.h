// Control flow in kernels: while_loop, if_stmt and dispatch over C++ values (arrays,
// vectors, matrices, PCG32 and tuples of them), in symbolic or evaluated mode, and
// print_async for per-lane output from inside a kernel. Everything here flattens the
// values into untyped handles and forwards to detail/control_api.h.
#pragma once

#include <kiln/detail/control_api.h>
#include <kiln/matrix.h>
#include <kiln/random.h>

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kiln {

namespace detail {
/// How a value type is split into arrays and rebuilt from them (the control-flow state).
template <typename T> struct Flattening;

template <ArrayScalar T> struct Flattening<Array<T>> {
  static void flatten(const Array<T>& value, Values& out) {
    if (!value.valid())
      throw ValueError("kiln: control flow: a state value has no array (default-constructed); assign it first");
    out.push_back(Handle::borrow(value.operand()));
  }
  static Array<T> rebuild(const Values& values, size_t& position) {
    return Array<T>::steal(Handle(values.at(position++)).take());
  }
};

template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
struct Flattening<V> {
  static void flatten(const V& value, Values& out) {
    for_each_array(value, [&](const auto& array) { Flattening<typename V::Component>::flatten(array, out); });
  }
  static V rebuild(const Values& values, size_t& position) {
    V result;
    for_each_array(result, [&](auto& array) { array = Flattening<typename V::Component>::rebuild(values, position); });
    return result;
  }
};

template <> struct Flattening<PCG32> {
  static void flatten(const PCG32& value, Values& out) {
    Flattening<UInt64>::flatten(value.state, out);
    Flattening<UInt64>::flatten(value.inc, out);
  }
  static PCG32 rebuild(const Values& values, size_t& position) {
    UInt64 state = Flattening<UInt64>::rebuild(values, position);
    return PCG32::from_state(state, Flattening<UInt64>::rebuild(values, position));
  }
};

/// A struct of Kiln values (e.g. a renderer's surface interaction) flattens member by
/// member when it lists them: `auto fields() { return std::tie(a, b, c); }` and the same
/// `const` (its members must themselves flatten; the struct default-constructs).
template <typename S>
  requires requires(S& s, const S& c) {
    s.fields();
    c.fields();
  }
struct Flattening<S> {
  static void flatten(const S& value, Values& out) {
    std::apply([&](const auto&... parts) { (Flattening<std::decay_t<decltype(parts)>>::flatten(parts, out), ...); },
               value.fields());
  }
  static S rebuild(const Values& values, size_t& position) {
    S result;
    std::apply(
        [&](auto&... parts) { ((parts = Flattening<std::decay_t<decltype(parts)>>::rebuild(values, position)), ...); },
        result.fields());
    return result;
  }
};

template <typename A, typename B> struct Flattening<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& value, Values& out) {
    Flattening<A>::flatten(value.first, out);
    Flattening<B>::flatten(value.second, out);
  }
  static std::pair<A, B> rebuild(const Values& values, size_t& position) {
    A first = Flattening<A>::rebuild(values, position);
    return {std::move(first), Flattening<B>::rebuild(values, position)};
  }
};

template <typename... Ts> struct Flattening<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& value, Values& out) {
    std::apply([&](const auto&... parts) { (Flattening<std::decay_t<decltype(parts)>>::flatten(parts, out), ...); },
               value);
  }
  static std::tuple<Ts...> rebuild(const Values& values, size_t& position) {
    // Braced initialization evaluates left to right, in the order flatten() wrote.
    return std::tuple<Ts...>{Flattening<Ts>::rebuild(values, position)...};
  }
};

template <typename T> Values flatten_values(const T& value) {
  Values out;
  Flattening<T>::flatten(value, out);
  return out;
}
template <typename T> T rebuild_values(const Values& values) {
  size_t position = 0;
  T result = Flattening<T>::rebuild(values, position);
  if (position != values.size())
    throw InternalError("kiln: control flow: rebuilt " + std::to_string(position) + " of " +
                        std::to_string(values.size()) + " arrays");
  return result;
}

/// The result of `fn(args...)` as a tuple (a single value becomes a one-element tuple).
template <typename R> auto as_tuple(R&& value) {
  if constexpr (requires { std::tuple_size<std::decay_t<R>>::value; })
    return std::forward<R>(value);
  else
    return std::tuple<std::decay_t<R>>(std::forward<R>(value));
}
template <typename R> R from_tuple(auto&& tuple) {
  if constexpr (requires { std::tuple_size<R>::value; })
    return tuple;
  else
    return std::get<0>(tuple);
}
}  // namespace detail

/// The mode a loop, conditional or call without mode= gets when traced here: symbolic
/// inside a symbolic statement, else the innermost ControlModeScope, else the global flag
/// (Flag::Symbolic, KILN_SYMBOLIC).
inline ControlMode default_mode() { return detail::default_mode(); }

/// Runs `body` while `cond` holds, lane by lane. `state` is a tuple of Kiln values;
/// `cond(state...)` returns a Bool and `body(state...)` the new state (the same types).
/// Symbolic mode records one real loop into the kernel; evaluated mode launches one kernel
/// per iteration over the lanes still active. Both give the same results. `derivative`
/// says how reverse mode differentiates a symbolic loop (autodiff.h). Derivatives trace
/// `cond` and `body` again later, so they are kept (copied) and must stay valid.
/// The state is per lane: arrays the loop gathers from or scatters into are used from the
/// enclosing scope, never passed as state (that raises ValueError in both modes). Traversals
/// (backward(), forward() ...) start after the statement, not inside its functions.
template <typename... Ts, typename Cond, typename Body>
std::tuple<Ts...> while_loop(const std::tuple<Ts...>& state, Cond&& cond, Body&& body,
                             std::optional<ControlMode> mode = std::nullopt, const std::string& name = "",
                             const LoopDerivative& derivative = {}) {
  using State = std::tuple<Ts...>;
  detail::ConditionFn c = [cond](const detail::Values& values) {
    Bool active = std::apply(cond, detail::rebuild_values<State>(values));
    return detail::Handle::borrow(active.index());
  };
  detail::BodyFn b = [body](const detail::Values& values) {
    State next = std::apply(body, detail::rebuild_values<State>(values));
    return detail::flatten_values(next);
  };
  return detail::rebuild_values<State>(detail::while_loop(detail::flatten_values(state), c, b, mode, name, derivative));
}

/// Per lane, `true_fn(args...)` where `cond` holds and `false_fn(args...)` elsewhere; both
/// return the same type (a value or a tuple). Symbolic: both branches are traced once and
/// masked; evaluated: each branch runs on the compacted lanes that take it.
/// Arguments are per lane: arrays the branches index (gather, scatter) come from the
/// enclosing scope.
template <typename... Ts, typename TrueFn, typename FalseFn>
auto if_stmt(const Bool& cond, TrueFn&& true_fn, FalseFn&& false_fn, const std::tuple<Ts...>& args,
             std::optional<ControlMode> mode = std::nullopt, const std::string& name = "") {
  using Args = std::tuple<Ts...>;
  using R = std::decay_t<decltype(std::apply(true_fn, args))>;
  using Result = decltype(detail::as_tuple(std::declval<R>()));
  auto branch = [](auto& fn) {  // a copy: derivatives trace the branches again later
    return detail::BodyFn([fn](const detail::Values& values) {
      return detail::flatten_values(Result(detail::as_tuple(std::apply(fn, detail::rebuild_values<Args>(values)))));
    });
  };
  detail::Values out =
      detail::if_stmt(cond.index(), branch(true_fn), branch(false_fn), detail::flatten_values(args), mode, name);
  return detail::from_tuple<R>(detail::rebuild_values<Result>(out));
}

/// Instances of a polymorphic type (e.g. materials) that dispatch() calls by id. Ids start
/// at 1; 0 and ids of removed instances are null (their lanes are inactive).
template <typename Base> class Registry {
 public:
  /// Registers `instance` (not owned; it must outlive its use) and returns its id.
  uint32_t add(Base* instance) {
    instances_.push_back(instance);
    return uint32_t(instances_.size());
  }
  void remove(uint32_t id) {
    if (id >= 1 && id <= instances_.size()) instances_[id - 1] = nullptr;
  }
  Base* get(uint32_t id) const { return id >= 1 && id <= instances_.size() ? instances_[id - 1] : nullptr; }
  /// Ids of the registered instances, in increasing order.
  std::vector<uint32_t> ids() const {
    std::vector<uint32_t> out;
    for (uint32_t id = 1; id <= instances_.size(); ++id)
      if (instances_[id - 1]) out.push_back(id);
    return out;
  }

 private:
  std::vector<Base*> instances_;
};

/// Per lane, `fn(*registry.get(ids[lane]), args...)`. Symbolic: each instance's method is
/// traced once into the kernel and selected per lane; instances whose methods trace the
/// same operations on different one-element values (a material's colour) share one body,
/// with those values selected per lane. Evaluated: one kernel per instance over its
/// compacted lanes. Null or unknown ids are inactive lanes with zero results.
/// Derivatives call `fn` (a copy) again later: the registry must outlive them.
/// Arguments are per lane, as for if_stmt().
template <typename Base, typename Fn, typename... Ts>
auto dispatch(const Registry<Base>& registry, const UInt32& ids, Fn&& fn, const std::tuple<Ts...>& args,
              std::optional<ControlMode> mode = std::nullopt, const std::string& name = "") {
  using Args = std::tuple<Ts...>;
  using R = std::decay_t<decltype(std::apply(fn, std::tuple_cat(std::tuple<Base&>(*registry.get(1)), args)))>;
  using Result = decltype(detail::as_tuple(std::declval<R>()));
  detail::InstanceFn call = [&registry, fn](uint32_t id, const detail::Values& values) {
    std::tuple<Base&> instance(*registry.get(id));
    return detail::flatten_values(
        Result(detail::as_tuple(std::apply(fn, std::tuple_cat(instance, detail::rebuild_values<Args>(values))))));
  };
  detail::Values out = detail::dispatch(ids.index(), registry.ids(), call, detail::flatten_values(args), mode, name);
  return detail::from_tuple<R>(detail::rebuild_values<Result>(out));
}

/// Prints `format` with each "{}" replaced by the lane's value of the next array, once per
/// lane where `active` is set, from inside whatever kernel computes the values (also inside
/// symbolic loops and calls). Lines appear after that kernel ran, grouped by lane in lane
/// order and, within a lane, in program order. Fields may carry Python's format
/// specifications ("{:.3f}", "{:>8}", "{:+e}", "{:#x}"); "{{" and "}}" print braces.
template <typename... Ts>
void print_async(const std::string& format, const std::tuple<Ts...>& values, const Bool& active = Bool(true)) {
  detail::print_async(format, detail::flatten_values(values), active.index());
}

}  // namespace kiln
