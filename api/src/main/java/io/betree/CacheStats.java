package io.betree;

/**
 * Counters of an environment's node cache at one moment, from {@link Environment#cacheStats()}.
 *
 * @param entries nodes and basements in the cache
 * @param bytes off-heap bytes those entries hold
 * @param budgetBytes the cache's budget ({@link EnvironmentOptions#cacheBytes})
 * @param misses lookups that had to read a block from the data file, since open
 * @param evictions entries dropped to stay within the budget, since open
 * @param writeBacks dirty entries written to the data file (at eviction or checkpoint), since open
 */
public record CacheStats(int entries, long bytes, long budgetBytes, long misses, long evictions, long writeBacks) {
}
