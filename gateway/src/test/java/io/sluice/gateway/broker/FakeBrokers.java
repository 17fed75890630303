package io.sluice.gateway.broker;

import java.util.ArrayList;
import java.util.List;

/** A few {@link FakeBroker}s on real sockets, for tests outside this package. */
public final class FakeBrokers implements AutoCloseable
{
    private final List<FakeBroker> brokers = new ArrayList<>();

    public FakeBrokers(final int count)
    {
        for (int b = 0; b < count; b++)
        {
            brokers.add(new FakeBroker(b));
        }
    }

    public String addresses()
    {
        return String.join(",", brokers.stream().map(FakeBroker::address).toList());
    }

    public void lead(final int brokerId, final int partitionId, final long term)
    {
        brokers.get(brokerId).term = term;
        brokers.get(brokerId).leading.put(partitionId, true);
    }

    public void follow(final int brokerId, final int partitionId, final long term)
    {
        brokers.get(brokerId).term = term;
        brokers.get(brokerId).leading.put(partitionId, false);
    }

    /** The broker keeps its connections but answers nothing, like a hung or SIGSTOPped process. */
    public void silence(final int brokerId)
    {
        brokers.get(brokerId).mode = FakeBroker.Mode.SILENT;
    }

    /** The broker answers every request UNAVAILABLE, as one recovering its Raft groups does (issue 30). */
    public void starting(final int brokerId)
    {
        brokers.get(brokerId).mode = FakeBroker.Mode.STARTING;
    }

    /** The broker answers normally again: its start is done. */
    public void serving(final int brokerId)
    {
        brokers.get(brokerId).mode = FakeBroker.Mode.NORMAL;
    }

    /** How many topology polls the broker answered (while serving). */
    public int topologiesAnswered(final int brokerId)
    {
        return brokers.get(brokerId).topologiesAnswered.get();
    }

    public AutoCloseable broker(final int brokerId)
    {
        return brokers.get(brokerId);
    }

    @Override
    public void close()
    {
        brokers.forEach(FakeBroker::close);
    }
}
