"""The offline extractor's word lists: which capitalised words open sentences, name roles,
people, organisations and places, and which words between two names say nothing of their
relation. Data only; the rules that read them are in adapters/llm/offline.py."""

# Sentence-opening words that read as common words, not names ("Released", "Reviewers", "Following").
_COMMON_ENDINGS = ("ed", "ing", "ly", "ers", "ies", "ness", "ment", "tion", "sion", "ous", "ful")
_OPENING_PARTICIPLES = frozenset("born raised based located situated nicknamed".split())

# Titles never end a sentence; "Acme Corp. She ..." does, so company suffixes are not here.
_SENTENCE_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs etc e.g i.e u.s u.k".split())
_HONORIFICS = frozenset("mr mrs ms dr prof sir dame".split())
_CONNECTORS = frozenset("of de du da di van von der del la le the & y".split())
_SENTENCE_STOP = frozenset(
    """the a an in it its this that these those he she they we i you on at for but and or if
    when while after before as by from with our his her their there here today yesterday
    tomorrow however meanwhile also then so yet since during although though because once
    what who which where why how all some many most each every no not my your us them
    hers later earlier now soon still thus hence instead finally eventually recently
    previously currently initially additionally furthermore moreover nevertheless overall
    yes please according despite unlike like""".split()
)
_ROLES = frozenset(
    """ceo cto cfo coo cio chairman chairwoman chair president vice director founder cofounder
    co-founder head minister secretary chief manager professor senator governor mayor king
    queen prince princess commander admiral colonel lieutenant sergeant emperor empress sultan""".split()
)
_FIRST_NAMES = frozenset(
    """alice bob carol dave david eve frank grace heidi ivan judy mallory oscar peggy trent
    victor walter john jane mary james robert michael william richard joseph thomas charles
    daniel matthew anthony mark paul steven andrew joshua kevin brian george edward ronald
    timothy jason jeffrey ryan jacob gary nicholas eric jonathan stephen larry justin scott
    brandon benjamin samuel gregory patrick jack dennis jerry tyler aaron henry peter adam
    nathan zach elon bill steve tim satya sundar jeff sam linda barbara elizabeth susan
    jessica sarah karen nancy lisa betty margaret sandra ashley kimberly emily donna michelle
    dorothy carol amanda melissa deborah stephanie rebecca laura sharon cynthia kathleen amy
    angela anna emma olivia sophia maria marie ada alan grace marie albert isaac charlotte
    hannah julia lucy chloe mia noah liam lucas leo hugo anne claire sophie""".split()
)
_PERSON_VERBS = frozenset(
    """said says say told wrote writes founded co-founded cofounded joined became leads led
    married born died resigned retired argued explained thinks believes announced tweeted""".split()
)
_ORG_SUFFIXES = frozenset(
    """inc inc. corp corp. corporation ltd ltd. llc plc gmbh ag sa co co. company university
    bank group institute foundation agency association council ministry department labs
    systems technologies partners holdings capital bureau committee party college school
    hospital airlines motors industries enterprises ventures studios games software""".split()
)
# Legal-form suffixes: "Acme Corp" and a later "Acme" are the same node.
_LEGAL_SUFFIXES = frozenset("inc corp corporation ltd llc plc gmbh ag sa co company".split())
_ORG_VERBS = frozenset("acquired launched released shipped hired merged raised sued".split())
_ORG_PREFIXES = frozenset("bank university ministry department institute college".split())
_ORG_HINTS = frozenset(
    """company firm startup start-up corporation business organisation organization agency
    maker manufacturer retailer lab nonprofit""".split()
)
_PLACE_SUFFIXES = frozenset(
    """city river street county island islands mountain mountains lake valley bay state
    province park road avenue ocean sea desert""".split()
)
_PLACE_PREPOSITIONS = frozenset("in near".split())
_PREPOSITIONS = frozenset("in on at of for with by from to into onto over under near".split())
_RELATION_STOP = frozenset(
    """is are was were be been being am has have had do does did the a an its their his her
    also now currently then still already recently and or but who which that this these
    those it they he she as well just very""".split()
)
