package io.betree.internal.fault;

/**
 * Told when a part of the engine hits a failure after which its in-memory state may be
 * inconsistent (a tree write that stopped half-way, a background write-back that failed). The
 * layer above passes one down and decides what follows, typically refusing further work until
 * the environment is reopened. Implementations must be thread-safe and must not block.
 */
@FunctionalInterface
public interface FailureListener {
    /** A listener that ignores every report, for components used on their own (tests, tools). */
    FailureListener IGNORE = cause -> { };

    /** Reports {@code cause}; called on the thread that hit it. */
    void failed(Throwable cause);
}
