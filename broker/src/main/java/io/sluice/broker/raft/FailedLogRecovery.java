package io.sluice.broker.raft;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Brings back this broker's replica of a group after a write of its Raft log failed (a full disk).
 * <p>
 * Ratis fails a log for good after one failed write: every later write of that division fails too, and nothing says
 * so but {@code notifyLogFailed}. A leader whose log failed stays leader and commits nothing (Ratis calls it "not
 * ready" for ever), so its partition stays unavailable after the disk is freed, until the broker restarts. Here the
 * division is closed at once, keeping its directory, so the group elects a leader among its other members, and
 * opened again from its directory (Ratis recovers the log and the snapshot there, the state reloads) once the disk
 * has room. Nothing acknowledged is lost: a replica counts an entry towards a commit only after writing it, and
 * entries it could not write come back from the leader.
 * <p>
 * Thread-safe; the close and the open run on {@code executor}, never on Ratis's log thread that reports the failure.
 */
public final class FailedLogRecovery implements ReplicatedStateAdapter.LogFailureHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(FailedLogRecovery.class);
    /** How often a closed division checks whether the disk has room to open it again. */
    static final long RETRY_MS = 1_000;

    /** What is done to the group's files before Ratis reads them again (the metadata a full disk left empty). */
    @FunctionalInterface
    public interface BeforeOpen
    {
        void run() throws IOException;
    }

    private final String name;
    private final GroupMember member;
    private final BooleanSupplier diskHasRoom;
    private final BeforeOpen beforeOpen;
    private final Executor executor;
    private final ScheduledExecutorService scheduler;
    private final AtomicBoolean recovering = new AtomicBoolean();
    private volatile long closedAtNanos;

    /**
     * @param name        the replica, for the logs: "partition 3 on broker 1"
     * @param diskHasRoom whether the broker's disk has room again (the division is opened only then)
     * @param executor    runs the blocking close and open
     * @param scheduler   times the retries
     */
    public FailedLogRecovery(
        final String name,
        final GroupMember member,
        final BooleanSupplier diskHasRoom,
        final BeforeOpen beforeOpen,
        final Executor executor,
        final ScheduledExecutorService scheduler)
    {
        this.name = name;
        this.member = member;
        this.diskHasRoom = diskHasRoom;
        this.beforeOpen = beforeOpen;
        this.executor = executor;
        this.scheduler = scheduler;
    }

    @Override
    public void onLogFailed(final Throwable cause, final long index)
    {
        if (member.isClosed() || !recovering.compareAndSet(false, true))
        {
            return;
        }
        LOG.error("{}: a write of its Raft log failed at index {} ({}): Ratis takes no more writes into that log, so " +
            "the replica is closed here (its group goes on with the others) and opened again from disk once the disk " +
            "has room", name, index, describe(cause));
        run(this::close);
    }

    private void close()
    {
        try
        {
            member.closeDivision();
            closedAtNanos = System.nanoTime();
            retryLater(this::open);
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("{}: cannot close the replica whose log failed ({}); trying again in {} ms", name, e.getMessage(),
                RETRY_MS);
            retryLater(this::close);
        }
    }

    private void open()
    {
        if (member.isClosed())
        {
            return;
        }
        if (!diskHasRoom.getAsBoolean())
        {
            retryLater(this::open);
            return;
        }
        try
        {
            beforeOpen.run();
            member.recoverDivision();
            recovering.set(false);
            LOG.info("{}: opened again from disk after its log failed ({} ms closed)", name,
                (System.nanoTime() - closedAtNanos) / 1_000_000);
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("{}: cannot open the replica again yet ({}); trying again in {} ms", name, e.getMessage(), RETRY_MS);
            retryLater(this::open);
        }
    }

    private void retryLater(final Runnable step)
    {
        if (member.isClosed())
        {
            return;
        }
        try
        {
            scheduler.schedule(() -> run(step), RETRY_MS, TimeUnit.MILLISECONDS);
        }
        catch (final RejectedExecutionException stopping)
        {
            // the broker is stopping
        }
    }

    private void run(final Runnable step)
    {
        try
        {
            executor.execute(step);
        }
        catch (final RejectedExecutionException stopping)
        {
            // the broker is stopping
        }
    }

    private static String describe(final Throwable cause)
    {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root)
        {
            root = root.getCause();
        }
        return root == cause ? String.valueOf(cause.getMessage()) : cause.getMessage() + ": " + root.getMessage();
    }
}
