/** Sets `key` in `map`, first dropping its oldest entry (Map keeps insertion order) when it holds `max`. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** The value under `key`, made the most recently used: the last that setBounded drops. */
export function takeRecent<K, V>(map: Map<K, V>, key: K): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}
