package io.sluice.qa.chaos;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.GatewayException;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The clients of a chaos run, each a thread with its own seeded randomness, recording every operation in the history:
 * appenders (keyed appends with {@code Idempotency-Key}, retried with the same key while the outcome is unknown), a
 * controller (pause, soft pause and resume of every pair, of one partition's pairs or of a few pairs, some with a
 * lease), a status reader, and a backfiller (reset to latest and backfill, then reading the backfill until it ends).
 */
public final class Workload
{
    /** Process ids in the history. */
    static final int CONTROLLER = 10;
    static final int STATUS_READER = 20;
    static final int BACKFILLER = 30;
    static final int HARNESS = 99;
    private static final int RETRIES = 4;
    private static final String EXPORTER = "file";

    private final GatewayClient client;
    private final HistoryRecorder recorder;
    private final Set<PartitionReplica> pairs;
    private final Map<Integer, List<Integer>> replicas;
    private final long seed;
    private final int appenders;
    private final AtomicBoolean running = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<String> backfills = new ConcurrentLinkedQueue<>();
    /** Backfills a read showed in a terminal state (they stay there: no need to read them again). */
    private final Set<String> ended = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Throwable> crashes = new ConcurrentLinkedQueue<>();

    public Workload(final GatewayClient client, final HistoryRecorder recorder, final Set<PartitionReplica> pairs,
        final Map<Integer, List<Integer>> replicas, final long seed, final int appenders)
    {
        this.client = client;
        this.recorder = recorder;
        this.pairs = Set.copyOf(pairs);
        this.replicas = Map.copyOf(replicas);
        this.seed = seed;
        this.appenders = appenders;
    }

    public void start()
    {
        running.set(true);
        for (int a = 0; a < appenders; a++)
        {
            final int process = a + 1;
            spawn("appender-" + process, () -> appendLoop(process, new Random(seed * 31 + process)));
        }
        spawn("controller", () -> controlLoop(new Random(seed * 31 + CONTROLLER)));
        spawn("status-reader", () -> statusLoop(new Random(seed * 31 + STATUS_READER)));
        spawn("backfiller", () -> backfillLoop(new Random(seed * 31 + BACKFILLER)));
    }

    /** Stops every client and waits (bounded) for the operations in flight to end. */
    public void stop()
    {
        running.set(false);
        for (final Thread thread : threads)
        {
            try
            {
                thread.join(30_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (!crashes.isEmpty())
        {
            throw new IllegalStateException("a workload client crashed", crashes.peek());
        }
    }

    /** Ids of every backfill the run started and no read has shown ended yet. */
    public List<String> unfinishedBackfills()
    {
        return backfills.stream().filter(id -> !ended.contains(id)).toList();
    }

    private void spawn(final String name, final Runnable loop)
    {
        final Thread thread = new Thread(() ->
        {
            try
            {
                loop.run();
            }
            catch (final Throwable ex)
            {
                crashes.add(ex);
            }
        }, "chaos-" + name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    // ---------------------------------------------------------------- appends

    private void appendLoop(final int process, final Random random)
    {
        int sequence = 0;
        while (running.get())
        {
            final String write = "s" + seed + "-a" + process + "-" + sequence++;
            final String body = "{\"key\":\"" + write + "\",\"payload\":{\"w\":\"" + write + "\"}}";
            for (int attempt = 0; attempt <= RETRIES && running.get(); attempt++)
            {
                if (append(process, write, body) != Outcome.UNKNOWN)
                {
                    break;
                }
                sleep(100 + random.nextInt(400));
            }
            sleep(random.nextInt(30));
        }
    }

    private Outcome append(final int process, final String write, final String body)
    {
        final int id = recorder.nextId();
        final long invoked = recorder.now();
        try
        {
            final HttpAnswer answer = client.postRecords(body, write);
            final long completed = recorder.now();
            if (answer.status() == 200)
            {
                final var json = answer.json();
                recorder.record(new Operation.Append(id, process, invoked, completed, Outcome.OK, write,
                    json.path("partitionId").asInt(-1), json.path("position").asLong(-1)));
                return Outcome.OK;
            }
            // 5xx: no leader in time, or an answer lost on the way back: the record may be committed
            final Outcome outcome = answer.status() >= 500 && answer.status() != 507 ? Outcome.UNKNOWN : Outcome.FAILED;
            recorder.record(new Operation.Append(id, process, invoked, completed, outcome, write, -1, -1));
            return outcome;
        }
        catch (final GatewayException ex)
        {
            recorder.record(new Operation.Append(id, process, invoked, Long.MAX_VALUE, Outcome.UNKNOWN, write, -1, -1));
            return Outcome.UNKNOWN;
        }
    }

    // ---------------------------------------------------------------- exporting control

    private void controlLoop(final Random random)
    {
        final List<PartitionReplica> all = new ArrayList<>(pairs);
        while (running.get())
        {
            final int pick = random.nextInt(100);
            final ControlKind kind = pick < 35 ? ControlKind.PAUSE : pick < 55 ? ControlKind.SOFT_PAUSE : ControlKind.RESUME;
            final int scope = random.nextInt(100);
            Set<PartitionReplica> targets = null;
            if (scope >= 60 && scope < 85)
            {
                final int partitionId = 1 + random.nextInt(replicas.size());
                targets = new TreeSet<>();
                for (final int brokerId : replicas.get(partitionId))
                {
                    targets.add(new PartitionReplica(brokerId, partitionId));
                }
            }
            else if (scope >= 85)
            {
                targets = new TreeSet<>();
                final int count = 1 + random.nextInt(3);
                while (targets.size() < count)
                {
                    targets.add(all.get(random.nextInt(all.size())));
                }
            }
            final long lease = kind != ControlKind.RESUME && random.nextInt(100) < 40 ? 2_000 + random.nextInt(6) * 1_000L : 0;
            control(CONTROLLER, kind, targets, lease);
            sleep(300 + random.nextInt(1_200));
        }
    }

    /** One pause, soft pause or resume ({@code targets} null: every pair), recorded. */
    public Operation.Control control(final int process, final ControlKind kind, final Set<PartitionReplica> targets,
        final long leaseMillis)
    {
        final StringBuilder action = new StringBuilder(kind == ControlKind.RESUME ? "resume" : "pause");
        final List<String> query = new ArrayList<>();
        if (kind == ControlKind.SOFT_PAUSE)
        {
            query.add("soft=true");
        }
        if (leaseMillis > 0)
        {
            query.add("lease=PT" + (leaseMillis / 1000) + "S");
        }
        if (!query.isEmpty())
        {
            action.append('?').append(String.join("&", query));
        }
        final Set<PartitionReplica> sent = targets == null ? pairs : Set.copyOf(targets);
        final int id = recorder.nextId();
        final long invoked = recorder.now();
        Operation.Control operation;
        try
        {
            final ExportingControlAnswer answer = client.exportingControl(action.toString(), targets);
            final long completed = recorder.now();
            final Outcome outcome = answer.status() == 200 ? Outcome.OK :
                answer.status() == 503 || answer.status() == 504 ? Outcome.UNKNOWN : Outcome.FAILED;
            operation = new Operation.Control(id, process, invoked, completed, outcome, kind, sent,
                answer.pairsWithOutcome("SUCCEEDED"), leaseMillis);
        }
        catch (final GatewayException ex)
        {
            operation = new Operation.Control(id, process, invoked, Long.MAX_VALUE, Outcome.UNKNOWN, kind, sent, Set.of(),
                leaseMillis);
        }
        recorder.record(operation);
        return operation;
    }

    // ---------------------------------------------------------------- status

    private void statusLoop(final Random random)
    {
        while (running.get())
        {
            readStatus(STATUS_READER, false);
            sleep(150 + random.nextInt(350));
        }
    }

    /** One {@code GET /actuator/exporting}, recorded; the states shown, or null without an answer. */
    public Operation.StatusRead readStatus(final int process, final boolean afterHeal)
    {
        final int id = recorder.nextId();
        final long invoked = recorder.now();
        Operation.StatusRead operation;
        try
        {
            final ExportingStatus status = client.exporting();
            final long completed = recorder.now();
            if (status.http().status() == 200)
            {
                final Map<PartitionReplica, String> states = new LinkedHashMap<>();
                for (final PairState pair : status.targets())
                {
                    states.put(pair.pair(), pair.state());
                }
                operation = new Operation.StatusRead(id, process, invoked, completed, Outcome.OK, states, afterHeal);
            }
            else
            {
                operation = new Operation.StatusRead(id, process, invoked, completed, Outcome.FAILED, Map.of(), afterHeal);
            }
        }
        catch (final GatewayException ex)
        {
            operation = new Operation.StatusRead(id, process, invoked, Long.MAX_VALUE, Outcome.UNKNOWN, Map.of(), afterHeal);
        }
        recorder.record(operation);
        return operation;
    }

    // ---------------------------------------------------------------- backfills

    private void backfillLoop(final Random random)
    {
        sleep(3_000 + random.nextInt(5_000));
        while (running.get())
        {
            final String backfillId = startBackfill();
            final long until = System.nanoTime() + 30_000_000_000L;
            while (backfillId != null && running.get() && System.nanoTime() - until < 0)
            {
                sleep(1_000);
                if (isTerminal(readBackfill(BACKFILLER, backfillId)))
                {
                    break;
                }
            }
            sleep(5_000 + random.nextInt(10_000));
        }
    }

    private String startBackfill()
    {
        final int id = recorder.nextId();
        final long invoked = recorder.now();
        try
        {
            final HttpAnswer answer = client.management("POST",
                "/actuator/exporters/" + EXPORTER + "/resetToLatestAndBackfill", null);
            final long completed = recorder.now();
            if (answer.status() == 202)
            {
                final String backfillId = answer.json().path("backfillId").asString(null);
                recorder.record(new Operation.BackfillStart(id, BACKFILLER, invoked, completed, Outcome.OK, backfillId));
                backfills.add(backfillId);
                return backfillId;
            }
            recorder.record(new Operation.BackfillStart(id, BACKFILLER, invoked, completed,
                answer.status() >= 500 ? Outcome.UNKNOWN : Outcome.FAILED, null));
        }
        catch (final GatewayException ex)
        {
            recorder.record(new Operation.BackfillStart(id, BACKFILLER, invoked, Long.MAX_VALUE, Outcome.UNKNOWN, null));
        }
        return null;
    }

    /** One {@code GET /actuator/backfills/{id}}, recorded; the state shown or null. */
    public String readBackfill(final int process, final String backfillId)
    {
        final int id = recorder.nextId();
        final long invoked = recorder.now();
        try
        {
            final HttpAnswer answer = client.get("/actuator/backfills/" + backfillId);
            final long completed = recorder.now();
            if (answer.status() == 200)
            {
                final String state = answer.json().path("state").asString(null);
                recorder.record(new Operation.BackfillRead(id, process, invoked, completed, Outcome.OK, backfillId, state));
                if (isTerminal(state))
                {
                    ended.add(backfillId);
                }
                return state;
            }
            recorder.record(new Operation.BackfillRead(id, process, invoked, completed, Outcome.FAILED, backfillId, null));
        }
        catch (final GatewayException ex)
        {
            recorder.record(new Operation.BackfillRead(id, process, invoked, Long.MAX_VALUE, Outcome.UNKNOWN, backfillId, null));
        }
        return null;
    }

    static boolean isTerminal(final String backfillState)
    {
        return "SUCCEEDED".equals(backfillState) || "FAILED".equals(backfillState) || "CANCELLED".equals(backfillState);
    }

    static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
