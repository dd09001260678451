package io.betree;

import io.betree.internal.cache.CacheBudget;

/**
 * One cap on the off-heap node memory of several environments of a process, for applications that
 * open many small stores (a stream processor opens one per partition): instead of a budget each,
 * which sums to more than the process can hold or starves the busy stores, they share one.
 *
 * <pre>{@code
 * MemoryBudget budget = MemoryBudget.of(256L << 20);
 * Environment a = Environment.open(dirA, EnvironmentOptions.defaults().memoryBudget(budget));
 * Environment b = Environment.open(dirB, EnvironmentOptions.defaults().memoryBudget(budget));
 * }</pre>
 *
 * <p>The cap is not a target: the environments' evictors work from a little below it, and writers
 * wait past it. Under pressure each environment keeps at least an equal share; a busy one takes
 * what idle ones do not use. An environment draws on the budget from its open until its close.
 *
 * <p>Thread-safe; holds no resources of its own, so it needs no closing.
 */
public final class MemoryBudget {
    private final CacheBudget budget;

    private MemoryBudget(long bytes) {
        this.budget = new CacheBudget(bytes);
    }

    /**
     * A budget of {@code bytes} for the environments opened with it.
     *
     * @throws IllegalArgumentException if below {@link EnvironmentOptions#MIN_CACHE_BYTES}
     */
    public static MemoryBudget of(long bytes) {
        if (bytes < EnvironmentOptions.MIN_CACHE_BYTES) {
            throw new IllegalArgumentException("a memory budget of " + bytes + " bytes is below the minimum of "
                    + EnvironmentOptions.MIN_CACHE_BYTES);
        }
        return new MemoryBudget(bytes);
    }

    /** The cap in bytes. */
    public long bytes() {
        return budget.capBytes();
    }

    /**
     * Off-heap bytes the open environments drawing on this budget hold now: their cached nodes, or,
     * when larger, their share of the node memory pool. A moment's figure.
     */
    public long usedBytes() {
        return budget.heldBytes();
    }

    /** Number of open environments drawing on this budget. */
    public int environments() {
        return budget.members();
    }

    /** The engine's side of this budget. */
    CacheBudget internal() {
        return budget;
    }

    @Override
    public String toString() {
        return "MemoryBudget[" + bytes() + " bytes, " + environments() + " environments]";
    }
}
