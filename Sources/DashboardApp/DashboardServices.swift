import ChatSimulator
import Engine
import Foundation
import HTTPCore
import Lifecycle
import Recovery
import Store
import Upstream

/// What the app may know and ask of the upstream, handed over by whoever chose it: what it offers
/// (`features`) and, for an upstream that signs in with a password (Matrix), the way to hand it
/// one. Everything else goes through the engine, which owns the session.
public struct UpstreamAccess: Sendable {
    public var features: UpstreamFeatures
    public var signIn: (any PasswordSignIn)?

    public init(features: UpstreamFeatures, signIn: (any PasswordSignIn)?) {
        self.features = features
        self.signIn = signIn
    }

    /// What `upstream` offers, read from it.
    public init(_ upstream: any UpstreamAPI) {
        self.init(features: upstream.features, signIn: upstream as? any PasswordSignIn)
    }
}

/// Everything behind the dashboard's API, wired once: the store, the engine, the feed, the error
/// registry, and the built-in simulator when there is one.
public struct DashboardServices: Sendable {
    public let store: MessageStore
    public let reader: StoreReader?
    public let engine: SyncEngine
    public let feed: EventFeed
    public let registry: ErrorRegistry
    /// What the upstream offers (features, a password sign-in).
    public let upstream: UpstreamAccess
    public let simulator: ChatSimulator?
    /// Fetches older history (a Matrix account); nil for an upstream without it.
    public let history: HistoryFetcher?
    /// Tells the upstream which chats were read here, behind the answer.
    public let readMarkers: ReadMarkerQueue
    /// Sends what the person writes (empty for an upstream that takes no messages).
    public let outboxes: Outboxes
    /// The HTTP server's counters, for `/metrics` (set once the server exists).
    public let httpStatistics: @Sendable () -> HTTPServerStatistics?
    /// What must run for the rest to work: the hub that carries the engine's events into the feed
    /// and the registry, the history fetcher and the read markers' queue. Whoever runs the process runs them (a
    /// `ServiceGroup`); nothing here starts a task of its own.
    public let background: [any Service]

    public init(store: MessageStore, reader: StoreReader?, engine: SyncEngine, feed: EventFeed, registry: ErrorRegistry,
                upstream: UpstreamAccess, simulator: ChatSimulator?, history: HistoryFetcher? = nil, readMarkers: ReadMarkerQueue,
                outboxes: Outboxes = Outboxes(), httpStatistics: @escaping @Sendable () -> HTTPServerStatistics? = { nil },
                background: [any Service] = []) {
        self.store = store
        self.reader = reader
        self.engine = engine
        self.feed = feed
        self.registry = registry
        self.upstream = upstream
        self.simulator = simulator
        self.history = history
        self.readMarkers = readMarkers
        self.outboxes = outboxes
        self.httpStatistics = httpStatistics
        self.background = background
    }

    /// Builds the engine with its events flowing into a feed and an error registry, carried by
    /// the hub in `background`. `makeEngine` receives the function the engine emits through.
    /// `sending` is what the outbox sends through, and `sendLoop` the loop its answers are read
    /// on, where the senders then run.
    public static func assemble(store: MessageStore, reader: StoreReader?, epoch: String, loop: EventLoop, upstream: UpstreamAccess,
                                simulator: ChatSimulator?,
                                registryClock: any Clock<Duration> = ContinuousClock(),
                                httpStatistics: @escaping @Sendable () -> HTTPServerStatistics? = { nil },
                                olderHistory: (any OlderHistory)? = nil, sending: (any MessageSending)? = nil, sendLoop: EventLoop? = nil,
                                makeEngine: @Sendable (@escaping @Sendable (EngineEvent) -> Void) -> SyncEngine) async -> DashboardServices {
        let feed = EventFeed(epoch: epoch, loop: loop, finish: { SecurityHeaders.api.apply(to: &$0) })
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let engine = makeEngine { sink.yield($0) }
        // One sender per account the upstream can have, each with its own line.
        var senders: [AccountRole: OutboxSender] = [:]
        if let sending {
            for account in upstream.features.linkedAccount ? AccountRole.allCases : [.primary] {
                senders[account] = OutboxSender(store: store, upstream: sending, account: account,
                                                liveSession: { [session = engine.liveSession] in session.sending(as: account) }, emit: { sink.yield($0) })
            }
        }
        let outboxes = Outboxes(senders)
        let attempter = EngineAttempter(engine: engine, store: store, upstream: upstream, outboxes: outboxes,
                                        exports: UnsentExport(beside: store.location), removed: { plan in
            let usage = await store.storageUsage()
            await feed.publish("messages.removed", MessagesRemovedBody(plan: plan, usage: usage))
        })
        let registry = ErrorRegistry(presenter: FeedPresenter(feed: feed), attempter: attempter, clock: registryClock)
        // Older history rides on the engine's session and tells the page through the same stream.
        let history = olderHistory.map { upstream in
            HistoryFetcher(store: store, upstream: upstream, liveSession: { [session = engine.liveSession] in session.token }, emit: { sink.yield($0) })
        }
        let hub = DashboardHub(feed: feed, registry: registry, attempter: attempter, history: history, outboxes: outboxes)
        // The hub publishes to the feed, whose polls are answered on the loop: it runs there too.
        var background: [any Service] = [NamedService("events") { await withTaskExecutorPreference(loop) { await hub.run(events) } }]
        if let history { background.append(NamedService("history") { await history.run() }) }
        let readMarkers = ReadMarkerQueue { place, event in await engine.markReadUpstream(place, eventId: event) }
        background.append(NamedService("read markers") { await readMarkers.run() })
        for (account, sender) in senders.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            // On the loop its sends are read on, if it has one: an answer resumes the sender where it
            // was read, with no hop to another thread and back on each message.
            background.append(NamedService("outbox (\(account))") { await withTaskExecutorPreference(sendLoop) { await sender.run() } })
        }
        await feed.onVisibilityChanged { visible in await engine.setDashboardVisible(visible) }
        // Every window shows the simulator as it is, whoever changed it and through which door.
        if let simulator {
            background.append(NamedService("simulator settings") {
                for await settings in simulator.settingsChanges { await feed.publish("simulator", settings) }
            })
        }
        return DashboardServices(store: store, reader: reader, engine: engine, feed: feed, registry: registry, upstream: upstream,
                                 simulator: simulator, history: history, readMarkers: readMarkers, outboxes: outboxes, httpStatistics: httpStatistics,
                                 background: background)
    }
}
