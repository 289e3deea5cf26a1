"""The offline extractor's word lists: which capitalised words open sentences, name roles,
people, organisations and places, and which words between two names say nothing of their
relation. Data only; the rules that read them are in adapters/llm/offline.py."""

# Sentence-opening words that read as common words, not names ("Released", "Reviewers", "Following").
COMMON_ENDINGS = ("ed", "ing", "ly", "ers", "ies", "ness", "ment", "tion", "sion", "ous", "ful")
OPENING_PARTICIPLES = frozenset("born raised based located situated nicknamed".split())

# Titles never end a sentence; "Acme Corp. She ..." does, so company suffixes are not here.
SENTENCE_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs etc e.g i.e u.s u.k".split())
HONORIFICS = frozenset("mr mrs ms dr prof sir dame".split())
CONNECTORS = frozenset("of de du da di van von der del la le the & y".split())
SENTENCE_STOP = frozenset(
    """the a an in it its this that these those he she they we i you on at for but and or if
    when while after before as by from with our his her their there here today yesterday
    tomorrow however meanwhile also then so yet since during although though because once
    what who which where why how all some many most each every no not my your us them
    hers later earlier now soon still thus hence instead finally eventually recently
    previously currently initially additionally furthermore moreover nevertheless overall
    yes please according despite unlike like""".split()
)
ROLES = frozenset(
    """ceo cto cfo coo cio chairman chairwoman chair president vice director founder cofounder
    co-founder head minister secretary chief manager professor senator governor mayor king
    queen prince princess commander admiral colonel lieutenant sergeant emperor empress sultan""".split()
)
FIRST_NAMES = frozenset(
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
PERSON_VERBS = frozenset(
    """said says say told wrote writes founded co-founded cofounded joined became leads led
    married born died resigned retired argued explained thinks believes announced tweeted""".split()
)
ORG_SUFFIXES = frozenset(
    """inc inc. corp corp. corporation ltd ltd. llc plc gmbh ag sa co co. company university
    bank group institute foundation agency association council ministry department labs
    systems technologies partners holdings capital bureau committee party college school
    hospital airlines motors industries enterprises ventures studios games software""".split()
)
# Legal-form suffixes: "Acme Corp" and a later "Acme" are the same node.
LEGAL_SUFFIXES = frozenset("inc corp corporation ltd llc plc gmbh ag sa co company".split())
ORG_VERBS = frozenset("acquired launched released shipped hired merged raised sued".split())
ORG_PREFIXES = frozenset("bank university ministry department institute college".split())
ORG_HINTS = frozenset(
    """company firm startup start-up corporation business organisation organization agency
    maker manufacturer retailer lab nonprofit""".split()
)
PLACE_SUFFIXES = frozenset(
    """city river street county island islands mountain mountains lake valley bay state
    province park road avenue ocean sea desert""".split()
)
PLACE_PREPOSITIONS = frozenset("in near".split())
PREPOSITIONS = frozenset("in on at of for with by from to into onto over under near".split())
RELATION_STOP = frozenset(
    """is are was were be been being am has have had do does did the a an its their his her
    also now currently then still already recently and or but who which that this these
    those it they he she as well just very""".split()
)

# Chat (adapters/llm/offline_chat.py). Words that open or fill a turn and name nothing: greetings,
# interjections, fillers, thanks and congratulations, as chat writes them.
INTERJECTIONS = frozenset(
    """everyone everybody everything someone somebody something anyone anybody anything nobody
    nothing hi hey heya hiya hello yo morning evening night bye goodbye cheers thanks thank thx ty
    congrats congratulations wow woah whoa omg omfg lol lmao rofl haha hahaha hahahaha hah ha
    hehe heh jaja jajaja jajajaja aww awww aw ooh oooh oh ohh ah ahh argh ugh ew eek yikes yay
    woohoo hooray yeah yea yep yup yes yess yesss nope nah no ok okay okk kk k alright right
    sure totally definitely absolutely exactly indeed honestly anyway anyways well so um umm
    uh hmm hm mhm oops whoops damn dang gosh god jeez sorry please pls plz xx xxx x btw
    fyi imo tbh idk ikr omw brb ttyl ahaha aha ahah ya yah hurray bravo""".split()
)
# Words that are no entity alone ("Great!", "Love it") but may start one ("Great North Run").
LONE_FILLERS = frozenset(
    """nice cool great awesome amazing wonderful lovely brilliant fab fabulous perfect good
    happy merry dear welcome love lucky true fair same best glad proud any always really mine
    yours ours tonight fingers""".split()
)
# Two-word greetings and fillers ("Good morning", "Happy birthday", "Thank you").
FILLER_PHRASES = frozenset(
    """good_morning good_afternoon good_evening good_night good_luck happy_birthday
    happy_anniversary happy_holidays happy_new merry_christmas thank_you thanks_so no_way
    of_course oh_my my_god see_you take_care well_done""".split()
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
MONTHS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
# Pronoun contractions ("I'm", "you're", "it's", "that's") open a turn and name nothing.
CONTRACTION_ENDINGS = ("'m", "'ll", "'ve", "'re", "'d", "n't")
# A lone sentence opener followed by a finite verb is its subject, a name ("Tala says", "Juno
# hated"): these irregular forms, or a regular -ed / -s form of a verb.
FINITE_VERBS = frozenset(
    """is was has had does did went came got made took saw met knew thought bought brought found
    gave told said left lost won ran began wrote read spoke taught sold sent built felt kept held
    paid flew drove rode ate drank sang swam put fell drew grew wore chose broke became""".split()
)
# Words between a subject and its verb ("Pickle also learned", "Juno absolutely hated").
SUBJECT_ADVERBS = frozenset("also just finally still never always really actually even".split())
# Relation heads (chat): common verbs in their base and irregular forms; regular -ed/-ing/-s
# forms of these and any other -ed/-ing word also head a relation.
VERBS = frozenset(
    """be go went gone going come came get got gotten make made take took taken see saw seen
    meet met know knew known think thought buy bought bring brought find found give gave given
    tell told say said leave left lose lost win won run ran begin began begun write wrote
    written read speak spoke teach taught sell sold send sent build built feel felt keep kept
    hold held pay paid fly flew flown drive drove driven ride rode eat ate drink drank sing
    sang swim swam do did done have has had live work move visit adopt love like hate want
    need start join marry study play watch call name help plan try use open own run travel
    finish learn cook paint bake sign book hire quit lead led fall fell grow grew draw drew
    wear wore choose chose break broke become became stay return walk talk ask stop head
    enjoy miss host take prefer share""".split()
)
# -ed/-ing/-s words that are no verbs.
NOT_VERBS = frozenset(
    """thing things morning evening wedding nothing something anything everything king ring
    spring building ceiling sibling during bed red need seed speed weekend bits lots years
    days weeks months kids parents friends photos news""".split()
)
# Leading words a relation head may carry: modals and adverbs ("will go to" -> "go_to").
RELATION_LEADERS = frozenset(
    """will would can could should might must may shall gonna wanna going_to just really
    actually finally also still even only probably definitely totally literally so""".split()
)
# "Label: text" lines that are no chat turn.
LABELS = frozenset(
    """note notes summary title subject re date time question answer q a warning error example
    tip source update step todo ps nb caption description tags status result error task tools
    name role company email phone address url link type category priority owner location""".split()
)
# A relation holding one of these is a clause fragment ("chose_them_cause", "says_it_s_because").
CLAUSE_WORDS = frozenset(
    """because cause cuz coz cos since so but and or if when while though although until unless
    what where why how them me him us you i s m ll ve re d t""".split()
)
