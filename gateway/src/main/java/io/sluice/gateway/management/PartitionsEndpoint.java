package io.sluice.gateway.management;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.stereotype.Component;

/** {@code GET /actuator/partitions}: every broker and every (broker, partition) pair with role, term and reachability. */
@Component
@Endpoint(id = "partitions")
public class PartitionsEndpoint
{
    private final ClusterViewService cluster;

    public PartitionsEndpoint(final ClusterViewService cluster)
    {
        this.cluster = cluster;
    }

    @ReadOperation
    public ClusterView partitions()
    {
        return cluster.view();
    }
}
