// What a detector derives from its parameters (a set of listed countries, a sorted list of
// windows), worked out once per parameter object rather than for every evaluation of every subject:
// a compiled ruleset's parameters never change, and are never copied between evaluations.
export function perParameters<K extends object, V>(derive: (parameters: K) => V): (parameters: K) => V {
  const derived = new WeakMap<K, V>();
  return (parameters) => {
    if (derived.has(parameters)) return derived.get(parameters)!;
    const value = derive(parameters);
    derived.set(parameters, value);
    return value;
  };
}
