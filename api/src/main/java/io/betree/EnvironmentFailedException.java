package io.betree;

/**
 * The environment refuses work because an earlier failure left its in-memory state unknown: a log
 * sync or a checkpoint failed, or a commit was logged but not wholly applied. The cause is that
 * earlier failure. Close the environment and open it again: opening recovers every commit that
 * reached the log, from the last checkpoint on.
 */
public class EnvironmentFailedException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception whose message names the earlier failure, which is {@code cause}. */
    public EnvironmentFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
