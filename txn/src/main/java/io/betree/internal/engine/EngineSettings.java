package io.betree.internal.engine;

import java.time.Duration;

/**
 * What an {@link Engine} is opened with; the API derives it from its public options.
 *
 * @param cacheBytes the node cache's byte budget
 * @param syncEveryCommit whether a commit returns only once its log record is on disk
 * @param periodicSync how often the log is synced in the background, or {@code null} for never
 * @param checkpointInterval how often a checkpoint runs in the background; zero for never
 * @param logSegmentBytes the size at which the log starts a new segment file
 */
public record EngineSettings(long cacheBytes, boolean syncEveryCommit, Duration periodicSync,
        Duration checkpointInterval, long logSegmentBytes) {
}
