package io.betree.internal.engine;

import io.betree.internal.cache.CacheBudget;
import io.betree.internal.tree.UpdateFunctions;
import java.time.Duration;

/**
 * What an {@link Engine} is opened with; the API derives it from its public options.
 *
 * @param cacheBytes the node cache's byte budget
 * @param syncEveryCommit whether a commit returns only once its log record is on disk
 * @param periodicSync how often the log is synced in the background, or {@code null} for never
 * @param checkpointInterval how often a checkpoint runs in the background; zero for never
 * @param logSegmentBytes the size at which the log starts a new segment file
 * @param sharedBudget the budget the node cache shares with other engines' caches, or {@code null}
 *     for one of {@code cacheBytes} of its own
 * @param updateFunctions what update messages call, by name
 */
public record EngineSettings(long cacheBytes, boolean syncEveryCommit, Duration periodicSync,
        Duration checkpointInterval, long logSegmentBytes, CacheBudget sharedBudget, UpdateFunctions updateFunctions) {

    /** Settings with no update function. */
    public EngineSettings(long cacheBytes, boolean syncEveryCommit, Duration periodicSync, Duration checkpointInterval,
            long logSegmentBytes, CacheBudget sharedBudget) {
        this(cacheBytes, syncEveryCommit, periodicSync, checkpointInterval, logSegmentBytes, sharedBudget,
                UpdateFunctions.NONE);
    }

    /** Settings with a cache budget of the engine's own. */
    public EngineSettings(long cacheBytes, boolean syncEveryCommit, Duration periodicSync, Duration checkpointInterval,
            long logSegmentBytes) {
        this(cacheBytes, syncEveryCommit, periodicSync, checkpointInterval, logSegmentBytes, null);
    }
}
