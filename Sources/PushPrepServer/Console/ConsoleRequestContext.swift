import Foundation
import Hummingbird
import NIOCore
import PushPrepCore

/// What a console request carries to its page: the API's context (the request id, the logger,
/// the notes the access log reads, the client's address), then what the console's middleware
/// found: the session (``ConsoleSessionMiddleware``) and a POST's form (``ConsoleCSRFMiddleware``).
/// A child of ``APIRequestContext`` (Hummingbird's `ChildRequestContext`), made when a request
/// enters the console's group of routes.
struct ConsoleRequestContext: ChildRequestContext {
    typealias ParentContext = APIRequestContext

    var coreContext: CoreRequestContextStorage
    /// The API context's notes (the key the access log names).
    let notes: RequestNotes
    /// The address of the connection's peer, which failed logins are counted by.
    let remoteAddress: SocketAddress?
    /// The session and what the page's header shows of it; nil only before
    /// ``ConsoleSessionMiddleware`` has run, and on login, logout and the assets.
    var session: ConsoleVisit?
    /// A POST's body as the browser sent it (`application/x-www-form-urlencoded`), read by
    /// ``ConsoleCSRFMiddleware``; empty for other requests.
    var formBody = ""

    /// The context of a request entering the console's group: the API context's parts.
    init(context: APIRequestContext) {
        coreContext = context.coreContext
        notes = context.notes
        remoteAddress = context.remoteAddress
    }

    /// Request bodies are read with explicit caps (``ConsoleCSRFMiddleware``, the login form).
    var maxUploadSize: Int { 1 << 20 }

    /// The forms' decoder: Hummingbird's.
    var requestDecoder: URLEncodedFormDecoder { URLEncodedFormDecoder() }

    /// The session ``ConsoleSessionMiddleware`` found; a 403 on a route outside its group.
    func visit() throws -> ConsoleVisit {
        guard let session else { throw Problem(.forbidden, .forbidden, "no session") }
        return session
    }

    /// The POST's form as `Form`, decoded by ``requestDecoder``; 400 when it is not a form the
    /// pages send.
    func form<Form: Decodable>(_ type: Form.Type) throws -> Form {
        try Self.decode(type, from: formBody)
    }

    /// `text` (a form's body or a query string) as `Form`: a field absent is nil and an empty
    /// one `""`; a repeated field, a malformed name or percent-encoding, or a field with
    /// brackets where a text is expected is `invalid_request` (400).
    static func decode<Form: Decodable>(_ type: Form.Type, from text: String) throws -> Form {
        do {
            return try URLEncodedFormDecoder().decode(type, from: text)
        } catch {
            throw Problem(
                .badRequest, .invalidRequest,
                "this form could not be read (a field repeated, or a malformed name or percent-encoding)")
        }
    }
}

/// What a console page runs with: the session, its CSRF token for the page's forms, and what
/// the page's header shows (a notice after a redirect, the path for the navigation).
struct ConsoleVisit {
    var session: ConsoleSession
    var csrf: String
    var path: String
    var notice: String?

    /// Whether the page offers the forms that change jobs.
    var canWrite: Bool { session.scopes.contains(.write) }
}

/// The field every form of the pages sends: the session's CSRF token.
struct ConsoleCSRFField: Decodable {
    var csrf: String?
}

/// A job's retry or cancel form: where the browser goes back to.
struct ConsoleReturnForm: Decodable {
    var returnPath: String?

    enum CodingKeys: String, CodingKey {
        case returnPath = "return"
    }
}
